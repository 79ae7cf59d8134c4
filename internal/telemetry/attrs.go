package telemetry

import (
	"math"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// Attribute keys. Fabric's own keys start with "fabric."; the gen_ai.*
// keys follow the OpenTelemetry GenAI semantic conventions.
const (
	KeyRuntimeID      = attribute.Key("fabric.runtime_id")
	KeyInvocationID   = attribute.Key("fabric.invocation_id")
	KeyRequestID      = attribute.Key("fabric.request_id")
	KeyAgent          = attribute.Key("fabric.agent")
	KeyHarness        = attribute.Key("fabric.harness")
	KeyAdapterID      = attribute.Key("fabric.adapter_id")
	KeyAdapterKind    = attribute.Key("fabric.adapter_kind")
	KeyEnvProvider    = attribute.Key("fabric.environment.provider")
	KeyStatus         = attribute.Key("fabric.status")
	KeyErrorStage     = attribute.Key("fabric.error.stage")
	KeyErrorRetryable = attribute.Key("fabric.error.retryable")
	KeyCostUSD        = attribute.Key("fabric.usage.cost_usd")
	KeyToolCalls      = attribute.Key("fabric.tool_calls")
	KeyModelRequests  = attribute.Key("fabric.model_requests")
	KeyToolServer     = attribute.Key("fabric.tool.server")
	KeyToolStatus     = attribute.Key("fabric.tool.status")
	KeyToolExitCode   = attribute.Key("fabric.tool.exit_code")
	KeyToolIncomplete = attribute.Key("fabric.tool.incomplete")
	KeyHTTPStatus     = attribute.Key("http.response.status_code")
	KeyErrorType      = attribute.Key("error.type")

	KeyGenAIOperation       = attribute.Key("gen_ai.operation.name")
	KeyGenAIProvider        = attribute.Key("gen_ai.provider.name")
	KeyGenAISystem          = attribute.Key("gen_ai.system") // deprecated name of gen_ai.provider.name, kept for older backends
	KeyGenAIAgentName       = attribute.Key("gen_ai.agent.name")
	KeyGenAIRequestModel    = attribute.Key("gen_ai.request.model")
	KeyGenAIResponseModel   = attribute.Key("gen_ai.response.model")
	KeyGenAIInputTokens     = attribute.Key("gen_ai.usage.input_tokens")
	KeyGenAIOutputTokens    = attribute.Key("gen_ai.usage.output_tokens")
	KeyGenAICacheReadTokens = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	KeyGenAIReasoningTokens = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	KeyGenAIFinishReasons   = attribute.Key("gen_ai.response.finish_reasons")
	KeyGenAIToolName        = attribute.Key("gen_ai.tool.name")
	KeyGenAIToolCallID      = attribute.Key("gen_ai.tool.call.id")
	KeyGenAIToolType        = attribute.Key("gen_ai.tool.type")
	KeyGenAITokenType       = attribute.Key("gen_ai.token.type")
)

// GenAI operation names.
const (
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"
)

// Event kinds the package reads. The first group is what Fabric's
// adapters emit today; model_request and model_response let an adapter
// that knows its model calls report them exactly instead of having them
// inferred from the turn's shape.
const (
	kindToolCall       = "tool_call"
	kindToolResult     = "tool_result"
	kindOutputDelta    = "output_delta"
	kindReasoningDelta = "reasoning_delta"
	kindUsage          = "usage"
	kindModelRetry     = "model_retry"
	kindStatus         = "status"
	kindModelRequest   = "model_request"
	kindModelResponse  = "model_response"
)

// Allow-listed event metadata keys, by meaning. Only these are ever read;
// everything else an event carries (commands, arguments, output, queries,
// reasons, free-form errors) is ignored.
var (
	mdToolCallID   = []string{"tool_call_id", "call_id", "id", "item_id", "tool_use_id"}
	mdToolResultID = []string{"tool_call_id", "call_id", "tool_use_id", "item_id", "id"}
	mdToolName     = []string{"tool", "name", "tool_name"}
	mdToolServer   = []string{"server"}
	mdParentTool   = []string{"parent_tool_use_id", "parent_tool_call_id"}
	mdModel        = []string{"model"}
	mdFinishReason = []string{"finish_reason", "stop_reason"}
)

// maxAttrLen bounds every string copied from an event or result into an
// attribute (identifiers and names only, so this is generous).
const maxAttrLen = 256

// str reads the first allow-listed key of md that holds a non-empty
// string, bounded to maxAttrLen bytes.
func str(md map[string]any, keys []string) string {
	for _, k := range keys {
		if s, ok := md[k].(string); ok && s != "" {
			return bound(s)
		}
	}
	return ""
}

func bound(s string) string {
	if len(s) <= maxAttrLen {
		return s
	}
	cut := maxAttrLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// integer reads md[key] as a whole number. JSON-decoded metadata holds
// float64; in-process metadata holds Go integers.
func integer(md map[string]any, key string) (int64, bool) {
	switch v := md[key].(type) {
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case uint32:
		return int64(v), true
	case uint64:
		if v > math.MaxInt64 {
			return math.MaxInt64, true
		}
		return int64(v), true
	case float64:
		if v != math.Trunc(v) || math.IsInf(v, 0) || v > math.MaxInt64 || v < math.MinInt64 {
			return 0, false
		}
		return int64(v), true
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func boolean(md map[string]any, key string) bool {
	b, _ := md[key].(bool)
	return b
}
