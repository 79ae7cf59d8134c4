package schemagen

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"

	"github.com/fabric-runtime/fabric/contract"
)

// The deployment document's schema is inlined (no $defs): objects are
// closed and no field is nullable, as the deployment parser requires.
// Integrations are a oneOf of closed objects, one per kind, discriminated
// by the constant "kind"; deploymentRules add what struct tags cannot say.

var (
	integrationType = reflect.TypeFor[contract.Integration]()
	deploymentType  = reflect.TypeFor[contract.Deployment]()
)

func deploymentReflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		Anonymous:      true,
		ExpandedStruct: true,
		DoNotReference: true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case rawMessageType:
				return &jsonschema.Schema{Type: "object", Description: "An inline FabricConfig (fabric.agent/v1alpha1)."}
			case integrationType:
				return integrationSchema()
			}
			return nil
		},
	}
}

// deploymentSchema is the whole document's schema.
func deploymentSchema() *jsonschema.Schema {
	s := deploymentReflector().ReflectFromType(deploymentType)
	applyRules(s, deploymentType, deploymentRules)
	return s
}

// integrationSchema is the oneOf of every registered integration kind.
func integrationSchema() *jsonschema.Schema {
	s := &jsonschema.Schema{Description: "One integration; kind selects the fields."}
	for _, kind := range contract.IntegrationKinds() {
		in, _ := contract.NewIntegration(kind)
		typ := reflect.TypeOf(in.Variant()).Elem()
		v := deploymentReflector().ReflectFromType(typ)
		applyRules(v, typ, deploymentRules)
		props := jsonschema.NewProperties()
		props.Set("kind", &jsonschema.Schema{Type: "string", Const: kind})
		for p := v.Properties.Oldest(); p != nil; p = p.Next() {
			props.Set(p.Key, p.Value)
		}
		v.Properties = props
		v.Required = append([]string{"kind"}, v.Required...)
		v.Version, v.Definitions = "", nil
		s.OneOf = append(s.OneOf, v)
	}
	return s
}

// applyRules walks an inlined schema beside its Go type and applies the
// rule of every struct type it meets, innermost first. Integrations have
// their own schema (integrationSchema) and are not entered.
func applyRules(s *jsonschema.Schema, t reflect.Type, rules map[reflect.Type]func(*jsonschema.Schema)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil || t == integrationType {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if s.Properties != nil {
			for i := range t.NumField() {
				f := t.Field(i)
				name := strings.Split(f.Tag.Get("json"), ",")[0]
				if !f.IsExported() || name == "-" || name == "" {
					continue
				}
				if p, ok := s.Properties.Get(name); ok {
					applyRules(p, f.Type, rules)
				}
			}
		}
		if rule := rules[t]; rule != nil {
			rule(s)
		}
	case reflect.Slice, reflect.Array:
		applyRules(s.Items, t.Elem(), rules)
	case reflect.Map:
		applyRules(s.AdditionalProperties, t.Elem(), rules)
	}
}

// deploymentRules constrain the deployment's parts beyond their tags.
var deploymentRules = map[reflect.Type]func(*jsonschema.Schema){
	reflect.TypeFor[contract.AccessIntegration](): func(s *jsonschema.Schema) {
		prop(s, "idempotency").Enum = []any{contract.AccessIdempotencyRequired, contract.AccessIdempotencyOptional}
		prop(s, "on_disconnect").Enum = []any{contract.AccessContinue, contract.AccessCancel}
		prop(s, "on_revoke").Enum = []any{contract.AccessCancel, contract.AccessContinue}
		one := uint64(1)
		c := prop(s, "clients")
		c.MinItems = &one
		c.Items.Pattern = contract.DeploymentNamePattern().String()
		prop(s, "retention_seconds").Minimum = json.Number("0")
	},
	// The metadata's name and uid.
	reflect.TypeFor[contract.DeploymentMetadata](): func(s *jsonschema.Schema) {
		prop(s, "name").Pattern = contract.DeploymentNamePattern().String()
		prop(s, "uid").Pattern = contract.UUIDPattern().String()
	},
	reflect.TypeFor[contract.DeploymentSpec](): integrationNames,
	// A socket for an external supervisor, none for a process.
	reflect.TypeFor[contract.SupervisorSpec](): func(s *jsonschema.Schema) {
		prop(s, "kind").Enum = []any{contract.SupervisorProcess, contract.SupervisorExternal}
		prop(s, "socket").Pattern = "^/"
		s.OneOf = []*jsonschema.Schema{
			{Properties: constProps("kind", contract.SupervisorProcess), Not: &jsonschema.Schema{Required: []string{"socket"}}},
			{Properties: constProps("kind", contract.SupervisorExternal), Required: []string{"socket"}},
		}
	},
	reflect.TypeFor[contract.SandboxSpec](): func(s *jsonschema.Schema) {
		prop(s, "name").Pattern = contract.DeploymentNamePattern().String()
		integrationNames(s)
	},
	// Exactly one of config and fabric.
	reflect.TypeFor[contract.DeployedAgent](): func(s *jsonschema.Schema) {
		prop(s, "name").Pattern = contract.DeploymentNamePattern().String()
		prop(s, "integrationRefs").Items.Pattern = contract.DeploymentNamePattern().String()
		prop(s, "integrationRefs").UniqueItems = true
		integrationNames(s)
		s.OneOf = []*jsonschema.Schema{{Required: []string{"config"}}, {Required: []string{"fabric"}}}
		prop(s, "start").Enum = []any{contract.StartAlways, contract.StartOnDemand}
		prop(s, "idle_stop_seconds").Minimum = json.Number("0")
	},
	reflect.TypeFor[contract.RestartPolicy](): func(s *jsonschema.Schema) {
		prop(s, "policy").Enum = []any{contract.RestartNever, contract.RestartOnFailure}
		prop(s, "max").Minimum = json.Number("1")
		b := prop(s, "backoff_seconds")
		two := uint64(2)
		b.MinItems, b.MaxItems = &two, &two
		b.Items.ExclusiveMinimum = json.Number("0")
	},
	// Exactly one of env and file.
	reflect.TypeFor[contract.CredentialRef](): func(s *jsonschema.Schema) {
		prop(s, "env").Pattern = contract.EnvNamePattern().String()
		one := uint64(1)
		prop(s, "file").MinLength = &one
		s.OneOf = []*jsonschema.Schema{{Required: []string{"env"}}, {Required: []string{"file"}}}
	},
	reflect.TypeFor[contract.MCPServerIntegration](): func(s *jsonschema.Schema) {
		prop(s, "transport").Enum = []any{contract.MCPServerStdio, contract.MCPServerHTTP}
		argvSchema(prop(s, "command"))
		prop(s, "url").Format = "uri"
		s.OneOf = []*jsonschema.Schema{
			{Properties: constProps("transport", contract.MCPServerStdio), Required: []string{"command"},
				Not: &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Required: []string{"run"}}, {Required: []string{"url"}}}}},
			{Properties: constProps("transport", contract.MCPServerHTTP), Required: []string{"run"},
				Not: &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Required: []string{"url"}}, {Required: []string{"command"}}, {Required: []string{"env"}}}}},
			{Properties: constProps("transport", contract.MCPServerHTTP), Required: []string{"url"},
				Not: &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Required: []string{"run"}}, {Required: []string{"command"}}, {Required: []string{"env"}}}}},
		}
	},
	reflect.TypeFor[contract.MCPRun](): func(s *jsonschema.Schema) {
		argvSchema(prop(s, "command"))
		p := prop(s, "port")
		p.Minimum, p.Maximum = json.Number("1"), json.Number("65535")
		prop(s, "path").Pattern = "^/"
	},
	reflect.TypeFor[contract.InferenceIntegration](): func(s *jsonschema.Schema) {
		prop(s, "api").Enum = toAny(contract.InferenceAPIs())
		prop(s, "base_url").Format = "uri"
		s.If = &jsonschema.Schema{Properties: constProps("brokered", true), Required: []string{"brokered"}}
		s.Then = &jsonschema.Schema{Required: []string{"credential"}}
	},
}

func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties.Get(name)
	if !ok {
		panic("schema: no property " + name)
	}
	return p
}

func constProps(name string, v any) *orderedmap.OrderedMap[string, *jsonschema.Schema] {
	p := jsonschema.NewProperties()
	p.Set(name, &jsonschema.Schema{Const: v})
	return p
}

// integrationNames constrains the names of an integrations map.
func integrationNames(s *jsonschema.Schema) {
	prop(s, "integrations").PropertyNames = &jsonschema.Schema{Pattern: contract.DeploymentNamePattern().String()}
}

func argvSchema(s *jsonschema.Schema) {
	one := uint64(1)
	s.MinItems = &one
	s.PrefixItems = []*jsonschema.Schema{{Type: "string", MinLength: &one}}
}
