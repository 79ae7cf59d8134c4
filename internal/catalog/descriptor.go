package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// MaxDescriptorBytes bounds a descriptor file.
const MaxDescriptorBytes = 1 << 20

// Entry is one loaded, validated descriptor with its compiled schemas.
type Entry struct {
	Descriptor contract.AdapterDescriptor
	Raw        json.RawMessage // the document exactly as read
	Path       string          // file path, or "bundled:<name>"
	Root       string          // directory the runner's relative paths resolve against
	Source     string          // contract.SourceBundled, ...

	Settings       *Schema // nil: only an empty settings map is accepted
	Model          *Schema // nil: model roles are not checked beyond the config shape
	ToolDefinition *Schema // nil: tools.definitions are rejected
	Workflow       *Schema // nil: a configured workflow is rejected
	Extensions     map[string]*Schema
}

// Resolved returns the provenance record embedded in a RunPlan.
func (e *Entry) Resolved() *contract.ResolvedAdapterDescriptor {
	return &contract.ResolvedAdapterDescriptor{Descriptor: e.Descriptor, Path: e.Path, Root: e.Root, Source: e.Source}
}

// DescriptorError reports an invalid descriptor with the JSON path of the
// offending field.
type DescriptorError struct {
	File  string
	Field string
	Msg   string
}

func (e *DescriptorError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
}

var knownAccepts = []string{
	contract.AcceptModels, contract.AcceptModelsBaseURL, contract.AcceptModelsTemperature,
	contract.AcceptModelsTopP, contract.AcceptModelsMaxTokens, contract.AcceptInstructionsSystem,
	contract.AcceptRuntimeMaxTurns, contract.AcceptToolsEnabled, contract.AcceptToolsDefinitions,
	contract.AcceptToolsBlocked, contract.AcceptMCP, contract.AcceptMCPToolFilters,
	contract.AcceptMCPAuthOAuth2, contract.AcceptMCPAuthServiceAccount, contract.AcceptSkills,
}

var v1alpha1Accepts = []string{contract.AcceptTools, contract.AcceptTelemetry}

var adapterKinds = []string{contract.AdapterKindProcess, contract.AdapterKindPython, contract.AdapterKindHTTP, contract.AdapterKindNativePlugin}

// LoadDescriptor parses, validates and compiles one descriptor document.
// path names it in errors.
func LoadDescriptor(data []byte, path string) (*Entry, error) {
	if len(data) > MaxDescriptorBytes {
		return nil, &DescriptorError{File: path, Msg: fmt.Sprintf("descriptor is %d bytes; the limit is %d", len(data), MaxDescriptorBytes)}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &DescriptorError{File: path, Msg: "a descriptor must be a JSON object"}
	}
	if err := checkDuplicateKeys(trimmed); err != nil {
		return nil, &DescriptorError{File: path, Msg: err.Error()}
	}
	var d contract.AdapterDescriptor
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&d); err != nil {
		field := ""
		var te *json.UnmarshalTypeError
		if asTypeErr(err, &te) {
			field = te.Field
			return nil, &DescriptorError{File: path, Field: field, Msg: fmt.Sprintf("must be %s, got JSON %s", te.Type, te.Value)}
		}
		return nil, &DescriptorError{File: path, Msg: "not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &DescriptorError{File: path, Msg: "trailing data after the descriptor object"}
	}
	if err := validateDescriptor(&d, path); err != nil {
		return nil, err
	}
	e := &Entry{Descriptor: d, Raw: append(json.RawMessage(nil), trimmed...), Path: path}
	if err := e.compile(); err != nil {
		return nil, err
	}
	return e, nil
}

func validateDescriptor(d *contract.AdapterDescriptor, path string) error {
	bad := func(field, msg string) error { return &DescriptorError{File: path, Field: field, Msg: msg} }
	switch d.ContractVersion {
	case contract.DescriptorV1Alpha2:
	case contract.DescriptorV1Alpha1:
		if strings.TrimSpace(d.Harness) == "" {
			return bad("harness", "is required by "+contract.DescriptorV1Alpha1)
		}
	case "":
		return bad("contract_version", "is required")
	default:
		return bad("contract_version", fmt.Sprintf("%q is not supported (want %s or %s)", d.ContractVersion, contract.DescriptorV1Alpha2, contract.DescriptorV1Alpha1))
	}
	if strings.TrimSpace(d.AdapterID) == "" {
		return bad("adapter_id", "is required and must not be blank")
	}
	if !slices.Contains(adapterKinds, d.AdapterKind) {
		return bad("adapter_kind", fmt.Sprintf("%q is not one of %s", d.AdapterKind, strings.Join(adapterKinds, ", ")))
	}
	for i, a := range d.Config.Accepts {
		if slices.Contains(knownAccepts, a) {
			continue
		}
		if d.ContractVersion == contract.DescriptorV1Alpha1 && slices.Contains(v1alpha1Accepts, a) {
			continue
		}
		return bad(fmt.Sprintf("config.accepts[%d]", i), fmt.Sprintf("%q is not a known config field", a))
	}
	for i, m := range d.Config.SystemInstructionModes {
		if m != contract.InstructionReplace && m != contract.InstructionAppend {
			return bad(fmt.Sprintf("config.system_instruction_modes[%d]", i), fmt.Sprintf("%q is not replace or append", m))
		}
	}
	if d.Config.Input != "" && d.Config.Input != contract.ConfigInputAgentConfig && d.Config.Input != contract.ConfigInputFabricConfig {
		return bad("config.input", fmt.Sprintf("%q is not agent_config or fabric_config", d.Config.Input))
	}
	for name := range d.Telemetry.Providers {
		if name != contract.TelemetryRelay && name != contract.TelemetryNative {
			return bad("telemetry.providers."+name, "unknown telemetry provider (want relay or native)")
		}
	}
	points := contract.ExtensionPoints()
	for name := range d.ExtensionSchemas {
		if !slices.Contains(points, name) {
			return bad("extension_schemas."+name, "unknown extension point")
		}
	}
	if _, err := d.RunnerSpec(); err != nil {
		return bad("runner", "invalid runner: "+err.Error())
	}
	for i := range d.ModelErrors {
		if field, err := d.ModelErrors[i].Validate(); err != nil {
			return bad(fmt.Sprintf("model_errors[%d]%s", i, field), err.Error())
		}
	}
	return nil
}

func isAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

func (e *Entry) compile() error {
	id := e.Descriptor.AdapterID
	one := func(field string, raw json.RawMessage) (*Schema, error) {
		if isAbsent(raw) {
			return nil, nil
		}
		s, err := CompileSchema(id+"/"+field, raw)
		if err != nil {
			return nil, &DescriptorError{File: e.Path, Field: field, Msg: err.Error()}
		}
		return s, nil
	}
	var err error
	d := &e.Descriptor
	if e.Settings, err = one("settings_schema", d.SettingsSchema); err != nil {
		return err
	}
	if e.Model, err = one("model_schema", d.ModelSchema); err != nil {
		return err
	}
	if e.ToolDefinition, err = one("tool_definition_schema", d.ToolDefinitionSchema); err != nil {
		return err
	}
	if e.Workflow, err = one("workflow_schema", d.WorkflowSchema); err != nil {
		return err
	}
	for name, raw := range d.ExtensionSchemas {
		s, err := one("extension_schemas."+name, raw)
		if err != nil {
			return err
		}
		if s != nil {
			if e.Extensions == nil {
				e.Extensions = map[string]*Schema{}
			}
			e.Extensions[name] = s
		}
	}
	return nil
}
