// Package schemagen generates the JSON Schemas of the documents Fabric
// exchanges from the Go types of package contract. It runs in tests only:
// the drift test writes schemas/ with -update and otherwise checks that the
// committed files, which package schemas embeds for the programs that
// validate, are what it generates. No shipped program links it
// (internal/testsupport/deptest).
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/fabric-runtime/fabric/contract"
)

// Doc describes one JSON document Fabric exchanges and the JSON Schema
// generated for it.
type Doc struct {
	// Name is the kebab-case schema name; the generated file is
	// schemas/<Name>.schema.json.
	Name string
	// Title is the schema's title: the upstream type name.
	Title string
	// Description is the schema's one-line description.
	Description string
	// Type is the Go type the schema is generated from.
	Type reflect.Type
}

// All lists every document with a generated JSON Schema: northbound
// documents first, then the southbound adapter contract, then reports. The
// slice is a fresh copy.
func All() []Doc {
	return []Doc{
		{"agent", "FabricConfig", "Harness-neutral agent configuration (fabric.agent/v1alpha1).", reflect.TypeFor[contract.FabricConfig]()},
		{"adapter-descriptor", "AdapterDescriptor", "Language-neutral adapter descriptor (*.fabric-adapter.json).", reflect.TypeFor[contract.AdapterDescriptor]()},
		{"run-plan", "RunPlan", "Resolved plan for one agent config and its selected adapter.", reflect.TypeFor[contract.RunPlan]()},
		{"run-request", "RunRequest", "Northbound invocation request.", reflect.TypeFor[contract.RunRequest]()},
		{"run-result", "RunResult", "Normalized result of one invocation.", reflect.TypeFor[contract.RunResult]()},
		{"fabric-event", "FabricEvent", "One normalized runtime event.", reflect.TypeFor[contract.FabricEvent]()},
		{"error-info", "ErrorInfo", "Normalized error of a result or lifecycle failure.", reflect.TypeFor[contract.ErrorInfo]()},
		{"artifact-manifest", "ArtifactManifest", "Artifacts with paths relative to the artifact root.", reflect.TypeFor[contract.ArtifactManifest]()},
		{"runtime-handle", "RuntimeHandle", "Handle of one started runtime.", reflect.TypeFor[contract.RuntimeHandle]()},
		{"invocation-handle", "InvocationHandle", "Handle of one invocation.", reflect.TypeFor[contract.InvocationHandle]()},
		{"environment-handle", "EnvironmentHandle", "Resolved execution environment.", reflect.TypeFor[contract.EnvironmentHandle]()},
		{"service-handle", "ServiceHandle", "Handle of a long-lived adapter service.", reflect.TypeFor[contract.ServiceHandle]()},
		{"service-reference", "ServiceReference", "Input for attaching to an existing adapter service.", reflect.TypeFor[contract.ServiceReference]()},
		{"runtime-stop-result", "RuntimeStopResult", "Answer to a runtime stop.", reflect.TypeFor[contract.RuntimeStopResult]()},
		{"agent-config", "AgentConfig", "Configuration projected southbound to one adapter target.", reflect.TypeFor[contract.AgentConfig]()},
		{"runtime-context", "RuntimeContext", "Context generated for one invocation of a started runtime.", reflect.TypeFor[contract.RuntimeContext]()},
		{"agent-run-request", "AgentRunRequest", "Southbound invocation request passed to an adapter target.", reflect.TypeFor[contract.AgentRunRequest]()},
		{"agent-run-result", "AgentRunResult", "Southbound terminal result returned by an adapter target.", reflect.TypeFor[contract.AgentRunResult]()},
		{"check-request", "CheckRequest", "Request for a bounded health check of one scope.", reflect.TypeFor[contract.CheckRequest]()},
		{"check-report", "CheckReport", "Answer to a health check request.", reflect.TypeFor[contract.CheckReport]()},
		{"doctor-report", "DoctorReport", "Result of preflight diagnosis.", reflect.TypeFor[contract.DoctorReport]()},
		{"deployment", "Deployment", "A deployment of sandboxes, agents and integrations (fabric.deployment/v1alpha1).", reflect.TypeFor[contract.Deployment]()},
		{"batch", "BatchSpec", "A batch of tasks x agent configs x repeats (fabric.batch/v1alpha1).", reflect.TypeFor[contract.BatchSpec]()},
		{"batch-trial", "BatchTrial", "One trial's record of a batch (trial.json).", reflect.TypeFor[contract.BatchTrial]()},
		{"batch-summary", "BatchSummary", "What a batch's trial records add up to (summary.json).", reflect.TypeFor[contract.BatchSummary]()},
		{"runtime-package", "PackageDescriptor", "A runtime package descriptor (fabric-package.json, fabric.package/v1alpha1).", reflect.TypeFor[contract.PackageDescriptor]()},
		{"support-catalog", "SupportCatalog", "One signed, hash-chained version of the support catalog (fabric.catalog/v1alpha1).", reflect.TypeFor[contract.SupportCatalog]()},
		{"trust", "Trust", "The support catalog's root of trust: keys, roles and thresholds (fabric.trust/v1alpha1).", reflect.TypeFor[contract.Trust]()},
		{"qualification-predicate", "QualificationStatement", "An in-toto Statement v1 with a qualification predicate (the payload of a qualification receipt).", reflect.TypeFor[contract.QualificationStatement]()},
	}
}

// Names returns the names of All, in the same order.
func Names() []string {
	docs := All()
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = d.Name
	}
	return names
}

// Lookup returns the Doc with the given name.
func Lookup(name string) (Doc, bool) {
	for _, d := range All() {
		if d.Name == name {
			return d, true
		}
	}
	return Doc{}, false
}

func unknownSchemaError(name string) error {
	return fmt.Errorf("schemagen: unknown schema %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Generate returns the JSON Schema (draft 2020-12) of the named
// document: definitions under $defs, keys in a stable order, two-space
// indentation and a trailing newline. The bytes are identical to
// schemas/<name>.schema.json.
//
// Properties are required when their json tag has neither omitempty nor
// omitzero and the field declares no default. Pointer fields, and slices or
// maps written as null when nil, also accept null. FabricConfig and
// AdapterDescriptor, with the blocks nested in them, allow unknown keys like
// upstream; every other object, the southbound contract included, is closed.
func Generate(name string) ([]byte, error) {
	doc, ok := Lookup(name)
	if !ok {
		return nil, unknownSchemaError(name)
	}
	s := reflectSchema(doc)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("schemagen: encode schema %q: %w", name, err)
	}
	return buf.Bytes(), nil
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// openTypes allow keys they do not declare, as upstream's northbound
// documents do. Fabric's own extension blocks (LifecycleLimits,
// DescriptorLimits, DoctorProbe) stay closed so that typos are caught.
var openTypes = []reflect.Type{
	reflect.TypeFor[contract.FabricConfig](),
	reflect.TypeFor[contract.MetadataConfig](),
	reflect.TypeFor[contract.RuntimeConfig](),
	reflect.TypeFor[contract.HarnessConfig](),
	reflect.TypeFor[contract.ModelConfig](),
	reflect.TypeFor[contract.InstructionsConfig](),
	reflect.TypeFor[contract.InstructionConfig](),
	reflect.TypeFor[contract.ToolsConfig](),
	reflect.TypeFor[contract.ToolDefinition](),
	reflect.TypeFor[contract.MCPConfig](),
	reflect.TypeFor[contract.MCPServerConfig](),
	reflect.TypeFor[contract.SkillsConfig](),
	reflect.TypeFor[contract.TelemetryConfig](),
	reflect.TypeFor[contract.TelemetryProviderConfig](),
	reflect.TypeFor[contract.EnvironmentConfig](),
	reflect.TypeFor[contract.DiscoveryConfig](),
	reflect.TypeFor[contract.WorkflowConfig](),
	reflect.TypeFor[contract.AdapterDescriptor](),
	reflect.TypeFor[contract.AdapterRequirements](),
	reflect.TypeFor[contract.AdapterConfigSupport](),
	reflect.TypeFor[contract.RuntimeCapabilities](),
	reflect.TypeFor[contract.AdapterTelemetrySupport](),
	reflect.TypeFor[contract.AdapterTelemetryProvider](),
}

// typeOverrides adjust a struct's generated schema where struct tags cannot
// say enough. They run after the field rules.
var typeOverrides = map[reflect.Type]func(*jsonschema.Schema){
	reflect.TypeFor[contract.MCPAuthentication](): func(s *jsonschema.Schema) { *s = *mcpAuthenticationSchema() },
	reflect.TypeFor[contract.AgentRunResult]():    agentRunResultRules,
	reflect.TypeFor[contract.AgentArtifact]():     agentArtifactPathRule,
	reflect.TypeFor[contract.ArtifactManifest](): func(s *jsonschema.Schema) {
		// MarshalJSON writes a nil list as [], never null.
		if p, ok := s.Properties.Get("artifacts"); ok && p.Extras != nil {
			p.Type, p.Extras = "array", nil
		}
	},
	reflect.TypeFor[contract.AdapterTelemetrySupport](): func(s *jsonschema.Schema) {
		if p, ok := s.Properties.Get("providers"); ok {
			p.PropertyNames = &jsonschema.Schema{Enum: []any{contract.TelemetryRelay, contract.TelemetryNative}}
		}
	},
	reflect.TypeFor[contract.BatchConfig](): func(s *jsonschema.Schema) {
		// An override sets any JSON value at a dotted path, not only an
		// object (the json.RawMessage mapping above).
		if p, ok := s.Properties.Get("overrides"); ok {
			p.AdditionalProperties = jsonschema.TrueSchema
		}
	},
	reflect.TypeFor[contract.AdapterDescriptor](): func(s *jsonschema.Schema) {
		if p, ok := s.Properties.Get("extension_schemas"); ok {
			p.PropertyNames = &jsonschema.Schema{Enum: toAny(contract.ExtensionPoints())}
		}
	},
}

func reflectSchema(doc Doc) *jsonschema.Schema {
	ours := doc.Type.PkgPath()
	structs := map[string]reflect.Type{}
	r := &jsonschema.Reflector{
		Anonymous:      true,
		ExpandedStruct: true,
		Namer: func(t reflect.Type) string {
			if t.Kind() == reflect.Struct && t.PkgPath() == ours && t.Name() != "" {
				structs[t.Name()] = t
			}
			return "" // keep the default: the Go type name
		},
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case rawMessageType:
				// Adapter-owned JSON Schemas: object roots, like upstream.
				return nullable(&jsonschema.Schema{Type: "object"})
			case deploymentType:
				// Inlined as a whole (deployment.go).
				s := deploymentSchema()
				s.Version, s.Definitions = "", nil
				return s
			}
			return nil
		},
	}
	root := r.ReflectFromType(doc.Type)
	root.Title = doc.Title
	root.Description = doc.Description

	names := make([]string, 0, len(structs))
	for n := range structs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		t := structs[n]
		s := root
		if t != doc.Type {
			s = root.Definitions[n]
		}
		if s == nil {
			continue
		}
		applyFieldRules(s, t)
		if slices.Contains(openTypes, t) {
			s.AdditionalProperties = jsonschema.TrueSchema
		}
		if override := typeOverrides[t]; override != nil {
			override(s)
		}
	}
	if len(root.Definitions) == 0 {
		root.Definitions = nil
	}
	return root
}

// applyFieldRules applies the rules invopop does not: const and object
// defaults from jsonschema tags, minimum 0 for unsigned integers, "a field
// with a default is optional", and null for pointers and for slices and maps
// that are written as null.
func applyFieldRules(s *jsonschema.Schema, t reflect.Type) {
	if s.Properties == nil {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		jsonTag := strings.Split(f.Tag.Get("json"), ",")
		name := jsonTag[0]
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		prop, ok := s.Properties.Get(name)
		if !ok {
			continue
		}
		for _, kv := range strings.Split(f.Tag.Get("jsonschema"), ",") {
			k, v, found := strings.Cut(kv, "=")
			if !found {
				continue
			}
			switch k {
			case "const":
				prop.Const = v
				prop.Enum = nil
			case "default":
				s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
				switch v {
				case "{}":
					prop.Default = map[string]any{}
				case "[]":
					prop.Default = []any{}
				}
			}
		}
		if prop.Type == "integer" && prop.Minimum == "" && isUnsigned(f.Type) {
			prop.Minimum = json.Number("0")
		}
		omitempty := slices.Contains(jsonTag[1:], "omitempty")
		switch k := f.Type.Kind(); {
		case k == reflect.Pointer,
			(k == reflect.Slice || k == reflect.Map) && !omitempty && f.Type != rawMessageType:
			s.Properties.Set(name, nullable(prop))
		}
	}
	if len(s.Required) == 0 {
		s.Required = nil
	}
}

// nullable returns a schema that also accepts null: a type list for plain
// types, anyOf for references, enums and constants.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	if s.Ref == "" && s.Enum == nil && s.Const == nil && s.Type != "" && s.Type != "null" {
		s.Extras = map[string]any{"type": []string{s.Type, "null"}}
		s.Type = ""
		return s
	}
	if s.Type == "" && s.Ref == "" && s.Enum == nil && s.Const == nil && len(s.AnyOf) == 0 && len(s.OneOf) == 0 {
		return s // already accepts anything, null included
	}
	inner := *s
	outer := &jsonschema.Schema{
		AnyOf:       []*jsonschema.Schema{&inner, {Type: "null"}},
		Description: inner.Description,
		Default:     inner.Default,
	}
	inner.Description, inner.Default = "", nil
	return outer
}

// mcpAuthenticationSchema is upstream's McpAuthenticationConfig: a oneOf of
// two closed objects discriminated by "type".
func mcpAuthenticationSchema() *jsonschema.Schema {
	str := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }
	optStr := func() *jsonschema.Schema { return nullable(str()) }
	scopes := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "array", Items: str()} }
	authMethod := func() *jsonschema.Schema {
		return nullable(&jsonschema.Schema{Type: "string", Enum: []any{"none", "client_secret_post", "client_secret_basic"}})
	}
	one := uint64(1)
	object := func(typ string, required []string, props ...any) *jsonschema.Schema {
		s := &jsonschema.Schema{
			Type:                 "object",
			Properties:           jsonschema.NewProperties(),
			AdditionalProperties: jsonschema.FalseSchema,
			Required:             append([]string{"type"}, required...),
		}
		s.Properties.Set("type", &jsonschema.Schema{Type: "string", Const: typ})
		for i := 0; i < len(props); i += 2 {
			s.Properties.Set(props[i].(string), props[i+1].(*jsonschema.Schema))
		}
		return s
	}
	oauth2 := object("oauth2", nil,
		"client_id", optStr(),
		"client_name", optStr(),
		"client_secret_env", optStr(),
		"redirect_uri", optStr(),
		"scopes", scopes(),
		"enable_dynamic_registration", &jsonschema.Schema{Type: "boolean"},
		"authorization_timeout_seconds", &jsonschema.Schema{Type: "integer", Minimum: json.Number("1")},
		"token_endpoint_auth_method", authMethod(),
	)
	oauth2.Description = "OAuth 2.0 authorization-code authentication."
	serviceAccount := object("service_account", []string{"client_id", "client_secret_env", "token_url"},
		"client_id", &jsonschema.Schema{Type: "string", MinLength: &one},
		"client_secret_env", &jsonschema.Schema{Type: "string", MinLength: &one},
		"token_url", &jsonschema.Schema{Type: "string", MinLength: &one},
		"scopes", scopes(),
		"token_cache_buffer_seconds", &jsonschema.Schema{Type: "integer", Minimum: json.Number("0")},
		"token_endpoint_auth_method", authMethod(),
	)
	serviceAccount.Description = "OAuth 2.0 client-credentials authentication for headless workloads."
	return &jsonschema.Schema{
		Description: "MCP server authentication; secrets are referenced by environment-variable name.",
		OneOf:       []*jsonschema.Schema{oauth2, serviceAccount},
	}
}

// agentRunResultRules: error is required when the status is failed and
// must be absent or null when it is succeeded.
func agentRunResultRules(s *jsonschema.Schema) {
	statusIs := func(v string) *jsonschema.Schema {
		p := jsonschema.NewProperties()
		p.Set("status", &jsonschema.Schema{Const: v})
		return &jsonschema.Schema{Properties: p, Required: []string{"status"}}
	}
	failedThen := jsonschema.NewProperties()
	failedThen.Set("error", &jsonschema.Schema{Ref: "#/$defs/AgentRunError"})
	succeededThen := jsonschema.NewProperties()
	succeededThen.Set("error", &jsonschema.Schema{Type: "null"})
	s.AllOf = []*jsonschema.Schema{
		{If: statusIs(contract.StatusFailed), Then: &jsonschema.Schema{Properties: failedThen, Required: []string{"error"}}},
		{If: statusIs(contract.StatusSucceeded), Then: &jsonschema.Schema{Properties: succeededThen}},
	}
}

// agentArtifactPathRule: artifact paths are relative to the artifact root.
func agentArtifactPathRule(s *jsonschema.Schema) {
	p, ok := s.Properties.Get("path")
	if !ok {
		return
	}
	p.Not = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Pattern: `^[\\/]`},
		{Pattern: `^[A-Za-z]:`},
		{Pattern: `(^|[\\/])\.\.([\\/]|$)`},
	}}
}

func isUnsigned(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
