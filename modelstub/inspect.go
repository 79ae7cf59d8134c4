package modelstub

import (
	"strings"
)

// tool is one tool a request offers.
type tool struct {
	name   string
	kind   string         // function, or local_shell (Responses built-in)
	schema map[string]any // JSON schema of the arguments; nil when none given
	// namespace and local are set for a function inside a Responses
	// namespace tool: name is then "<namespace>__<local>" (what scripts
	// name), and the call carries the namespace and the local name.
	namespace, local string
}

// view is what the stub needs to know about a generation request, whatever
// its API.
type view struct {
	api          API
	model        string
	stream       bool
	includeUsage bool // chat: stream_options.include_usage
	userText     string
	system       string
	tools        []tool
	toolResult   bool // the current turn already holds a tool result
	forcedTool   bool // tool_choice forces a tool call
	maxTokens    int  // the output token limit, 0 when not given

	// structured output asked for: json is true for any JSON answer;
	// schema is the requested schema when there is one.
	json   bool
	schema map[string]any
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func arr(v any) []any {
	a, _ := v.([]any)
	return a
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1<<31 {
		return 0
	}
	return int(f)
}

// contentText joins the text of an OpenAI/Anthropic-style content value: a
// string, or a list of parts with a text field.
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			pm := obj(p)
			if pm == nil {
				if s, ok := p.(string); ok {
					b.WriteString(s)
				}
				continue
			}
			switch str(pm["type"]) {
			case "", "text", "input_text", "output_text":
				if t := str(pm["text"]); t != "" {
					if b.Len() > 0 {
						b.WriteString("\n")
					}
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}

// inspect reads a generation request body of the given API.
func inspect(api API, body map[string]any) *view {
	v := &view{api: api, model: str(body["model"])}
	switch api {
	case APIChat:
		inspectChat(v, body)
	case APIResponses:
		inspectResponses(v, body)
	case APIMessages:
		inspectMessages(v, body)
	case APIGemini:
		inspectGemini(v, body)
	}
	return v
}

func inspectChat(v *view, body map[string]any) {
	v.stream, _ = body["stream"].(bool)
	if so := obj(body["stream_options"]); so != nil {
		v.includeUsage, _ = so["include_usage"].(bool)
	}
	v.maxTokens = num(body["max_tokens"])
	if n := num(body["max_completion_tokens"]); n > 0 {
		v.maxTokens = n
	}
	msgs := arr(body["messages"])
	last := -1
	var sys []string
	for i, m := range msgs {
		mm := obj(m)
		switch str(mm["role"]) {
		case "user":
			last = i
		case "system", "developer":
			sys = append(sys, contentText(mm["content"]))
		}
	}
	v.system = strings.Join(sys, "\n")
	if last >= 0 {
		v.userText = contentText(obj(msgs[last])["content"])
		for _, m := range msgs[last+1:] {
			switch str(obj(m)["role"]) {
			case "tool", "function":
				v.toolResult = true
			}
		}
	}
	for _, t := range arr(body["tools"]) {
		tm := obj(t)
		if f := obj(tm["function"]); f != nil {
			v.tools = append(v.tools, tool{name: str(f["name"]), kind: "function", schema: obj(f["parameters"])})
		}
	}
	for _, f := range arr(body["functions"]) {
		fm := obj(f)
		v.tools = append(v.tools, tool{name: str(fm["name"]), kind: "function", schema: obj(fm["parameters"])})
	}
	switch tc := body["tool_choice"].(type) {
	case string:
		v.forcedTool = tc == "required"
	case map[string]any:
		v.forcedTool = str(tc["type"]) == "function"
	}
	if rf := obj(body["response_format"]); rf != nil {
		switch str(rf["type"]) {
		case "json_object":
			v.json = true
		case "json_schema":
			v.json = true
			v.schema = obj(obj(rf["json_schema"])["schema"])
		}
	}
}

func inspectResponses(v *view, body map[string]any) {
	v.stream, _ = body["stream"].(bool)
	v.maxTokens = num(body["max_output_tokens"])
	sys := []string{str(body["instructions"])}
	switch in := body["input"].(type) {
	case string:
		v.userText = in
	case []any:
		last := -1
		for i, it := range in {
			im := obj(it)
			typ := str(im["type"])
			if typ != "" && typ != "message" {
				continue
			}
			switch str(im["role"]) {
			case "user":
				last = i
			case "system", "developer":
				sys = append(sys, contentText(im["content"]))
			}
		}
		if last >= 0 {
			v.userText = contentText(obj(in[last])["content"])
			for _, it := range in[last+1:] {
				if strings.HasSuffix(str(obj(it)["type"]), "_call_output") {
					v.toolResult = true
				}
			}
		} else {
			// A continuation (previous_response_id) may carry only outputs.
			for _, it := range in {
				if strings.HasSuffix(str(obj(it)["type"]), "_call_output") {
					v.toolResult = true
				}
			}
		}
	}
	v.system = strings.TrimSpace(strings.Join(sys, "\n"))
	for _, t := range arr(body["tools"]) {
		tm := obj(t)
		switch typ := str(tm["type"]); typ {
		case "function":
			v.tools = append(v.tools, tool{name: str(tm["name"]), kind: "function", schema: obj(tm["parameters"])})
		case "local_shell":
			v.tools = append(v.tools, tool{name: "local_shell", kind: "local_shell"})
		case "namespace":
			// A group of functions (Codex offers each MCP server's tools this
			// way); each is offered as <namespace>__<name>.
			ns := str(tm["name"])
			for _, st := range arr(tm["tools"]) {
				sm := obj(st)
				if str(sm["type"]) == "function" && str(sm["name"]) != "" {
					v.tools = append(v.tools, tool{name: ns + "__" + str(sm["name"]), kind: "function", schema: obj(sm["parameters"]), namespace: ns, local: str(sm["name"])})
				}
			}
		default:
			name := str(tm["name"])
			if name == "" {
				name = typ
			}
			v.tools = append(v.tools, tool{name: name, kind: typ})
		}
	}
	switch tc := body["tool_choice"].(type) {
	case string:
		v.forcedTool = tc == "required"
	case map[string]any:
		v.forcedTool = str(tc["type"]) == "function"
	}
	if f := obj(obj(body["text"])["format"]); f != nil {
		switch str(f["type"]) {
		case "json_object":
			v.json = true
		case "json_schema":
			v.json = true
			v.schema = obj(f["schema"])
		}
	}
}

// isToolResultMessage reports whether an Anthropic user message carries
// tool results (then it does not start a turn).
func isToolResultMessage(content any) bool {
	for _, p := range arr(content) {
		if str(obj(p)["type"]) == "tool_result" {
			return true
		}
	}
	return false
}

func inspectMessages(v *view, body map[string]any) {
	v.stream, _ = body["stream"].(bool)
	v.maxTokens = num(body["max_tokens"])
	v.system = contentText(body["system"])
	msgs := arr(body["messages"])
	last := -1
	for i, m := range msgs {
		mm := obj(m)
		if str(mm["role"]) == "user" && !isToolResultMessage(mm["content"]) {
			last = i
		}
	}
	if last >= 0 {
		v.userText = contentText(obj(msgs[last])["content"])
		for _, m := range msgs[last+1:] {
			if mm := obj(m); str(mm["role"]) == "user" && isToolResultMessage(mm["content"]) {
				v.toolResult = true
			}
		}
	}
	for _, t := range arr(body["tools"]) {
		tm := obj(t)
		v.tools = append(v.tools, tool{name: str(tm["name"]), kind: "function", schema: obj(tm["input_schema"])})
	}
	if tc := obj(body["tool_choice"]); tc != nil {
		switch str(tc["type"]) {
		case "any", "tool":
			v.forcedTool = true
		}
	}
	for _, f := range []map[string]any{obj(body["output_format"]), obj(obj(body["output_config"])["format"])} {
		if str(f["type"]) == "json_schema" {
			v.json = true
			v.schema = obj(f["schema"])
		}
	}
}

// geminiText joins the text parts of a Gemini Content.
func geminiText(c map[string]any) string {
	var parts []string
	for _, p := range arr(c["parts"]) {
		if t := str(obj(p)["text"]); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

func hasFunctionResponse(c map[string]any) bool {
	for _, p := range arr(c["parts"]) {
		pm := obj(p)
		if pm["functionResponse"] != nil || pm["function_response"] != nil {
			return true
		}
	}
	return false
}

// either returns m[camel], or m[snake] when the camelCase key is absent:
// the Gemini REST API accepts both spellings.
func either(m map[string]any, camel, snake string) any {
	if v, ok := m[camel]; ok {
		return v
	}
	return m[snake]
}

func inspectGemini(v *view, body map[string]any) {
	if si := either(body, "systemInstruction", "system_instruction"); si != nil {
		if s, ok := si.(string); ok {
			v.system = s
		} else {
			v.system = geminiText(obj(si))
		}
	}
	contents := arr(body["contents"])
	last := -1
	for i, c := range contents {
		cm := obj(c)
		role := str(cm["role"])
		if (role == "user" || role == "") && !hasFunctionResponse(cm) && geminiText(cm) != "" {
			last = i
		}
	}
	if last >= 0 {
		v.userText = geminiText(obj(contents[last]))
		for _, c := range contents[last+1:] {
			if hasFunctionResponse(obj(c)) {
				v.toolResult = true
			}
		}
	}
	for _, t := range arr(body["tools"]) {
		for _, fd := range arr(either(obj(t), "functionDeclarations", "function_declarations")) {
			fm := obj(fd)
			schema := obj(either(fm, "parametersJsonSchema", "parameters_json_schema"))
			if schema == nil {
				schema = obj(fm["parameters"])
			}
			v.tools = append(v.tools, tool{name: str(fm["name"]), kind: "function", schema: schema})
		}
	}
	tc := obj(either(body, "toolConfig", "tool_config"))
	fcc := obj(either(tc, "functionCallingConfig", "function_calling_config"))
	v.forcedTool = strings.EqualFold(str(fcc["mode"]), "any")
	gc := obj(either(body, "generationConfig", "generation_config"))
	v.maxTokens = num(either(gc, "maxOutputTokens", "max_output_tokens"))
	if s := obj(either(gc, "responseJsonSchema", "response_json_schema")); s != nil {
		v.json, v.schema = true, s
	} else if s := obj(either(gc, "responseSchema", "response_schema")); s != nil {
		v.json, v.schema = true, s
	}
	if strings.EqualFold(str(either(gc, "responseMimeType", "response_mime_type")), "application/json") {
		v.json = true
	}
}

func (v *view) toolNames() []string {
	if len(v.tools) == 0 {
		return nil
	}
	out := make([]string, len(v.tools))
	for i, t := range v.tools {
		out[i] = t.name
	}
	return out
}

// shellTools are the names harnesses give their shell tool, in no
// particular order: the first one the request offers is used.
var shellTools = map[string]bool{
	"exec_command": true, "shell": true, "shell_command": true, "local_shell": true,
	"bash": true, "exec": true, "run_shell_command": true, "run_command": true,
	"execute_command": true, "run_terminal_cmd": true, "terminal": true,
	"execute": true, // Factory Droid's Execute
}

func isShellTool(t tool) bool {
	return t.kind == "local_shell" || shellTools[strings.ToLower(t.name)]
}

// pickTool returns the tool a scripted call goes to: the named one, or the
// first shell-like one. ok is false when the request offers none.
func (v *view) pickTool(name string) (tool, bool) {
	for _, t := range v.tools {
		if name != "" {
			if t.name == name {
				return t, true
			}
			continue
		}
		if isShellTool(t) {
			return t, true
		}
	}
	return tool{}, false
}

// sideKeywords in a tool-less request's system prompt mark it as a side
// request.
var sideKeywords = []string{
	"title", "summar", "classif", "categori", "topic", "memory", "memories",
	"extract", "router", "routing", "prefix", "slug",
}

// userSidePhrases in the last user message mark a tool-less request as a
// side request even without a system prompt.
var userSidePhrases = []string{
	"generate a title", "generate a short title", "generate a concise title", "title for this conversation",
	"summarize this conversation", "summary of this conversation",
}

// sideReason applies the side-request heuristic (see Script) to a
// generation request; it returns "" for main requests.
func (v *view) sideReason() string {
	if v.json {
		return "structured_output"
	}
	if len(v.tools) == 1 && v.forcedTool && !isShellTool(v.tools[0]) {
		return "forced_tool:" + v.tools[0].name
	}
	if len(v.tools) > 0 {
		return ""
	}
	if v.maxTokens == 1 {
		return "max_tokens_1"
	}
	sys := strings.ToLower(v.system)
	for _, k := range sideKeywords {
		if strings.Contains(sys, k) {
			return "system_prompt:" + strings.TrimSpace(k)
		}
	}
	user := strings.ToLower(v.userText)
	for _, p := range userSidePhrases {
		if strings.Contains(user, p) {
			return "user_prompt:" + p
		}
	}
	return ""
}
