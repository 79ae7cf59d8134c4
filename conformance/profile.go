package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fabric-runtime/fabric/modelstub"
)

// DefaultInput is the invocation input when a profile gives none.
const DefaultInput = "conformance check"

// DefaultSecretEnv is the variable the built-in profiles name as the
// model's api_key_env.
const DefaultSecretEnv = "FABRIC_CONFORMANCE_API_KEY"

// SecretPlaceholder, in any string of the leak_stderr overlay, is replaced
// by the secret's value (so that the adapter writes it to its stderr).
const SecretPlaceholder = "{secret}"

// Profile says how to exercise one adapter. Config fragments are
// FabricConfig documents in JSON form (models, settings, ...); the suite
// fills in schema_version, metadata, runtime and harness.adapter_id.
type Profile struct {
	// AdapterID is the adapter under test (required).
	AdapterID string `json:"adapter_id"`
	// Descriptor is an optional path to the adapter's descriptor file; it
	// is added to discovery.local_paths of every config. Relative paths in
	// a profile file resolve against the profile's directory.
	Descriptor string `json:"descriptor,omitempty"`
	// Base is the config every item starts from (may be empty).
	Base map[string]any `json:"base,omitempty"`
	// Smallest is the config of the smallest-plan item (default: only the
	// adapter id, plus Descriptor's discovery path).
	Smallest map[string]any `json:"smallest,omitempty"`

	// FailedInvoke makes an invocation return status failed with an
	// adapter error code while the runtime stays active.
	FailedInvoke *Overlay `json:"failed_invoke,omitempty"`
	// StartFailure makes start fail.
	StartFailure *Overlay `json:"start_failure,omitempty"`
	// MalformedOutput makes the host write something that is not a valid
	// protocol frame during an invocation.
	MalformedOutput *Overlay `json:"malformed_output,omitempty"`
	// Hang makes an invocation run until the host is killed (the suite
	// kills the host's process group to provoke a transport failure).
	Hang *Overlay `json:"hang,omitempty"`
	// LeakStderr makes the host write SecretPlaceholder's value to its
	// stderr, for the redaction item.
	LeakStderr *Overlay `json:"leak_stderr,omitempty"`
	// TurnOutput makes the output of an invocation its turn number on the
	// runtime ("1", "2", ...), which lets the isolation item compare turn
	// counts of two runtimes.
	TurnOutput *Overlay `json:"turn_output,omitempty"`

	// InvalidSettings must be rejected at plan time; they are merged over
	// the base settings. Default: generated from the settings schema.
	InvalidSettings map[string]any `json:"invalid_settings,omitempty"`
	// UnsupportedField is a field the descriptor does not accept. Default:
	// the first of models.temperature, runtime.max_turns, tools.blocked,
	// skills and mcp missing from the descriptor's config.accepts.
	UnsupportedField *FieldProbe `json:"unsupported_field,omitempty"`

	// SecretEnv is the variable named as the selected model role's
	// api_key_env by the doctor and redaction items (they are skipped when
	// it is empty or the base config has no model).
	SecretEnv string `json:"secret_env,omitempty"`
	// Env is extra environment of every host (and of the doctor checks).
	Env map[string]string `json:"env,omitempty"`
	// Input is the invocation input (default DefaultInput).
	Input any `json:"input,omitempty"`
	// ExpectOutput, when set, must equal a successful invocation's output
	// (a string output; other outputs are compared as JSON).
	ExpectOutput string `json:"expect_output,omitempty"`
	// ExpectOutputContains, when set, must be part of it.
	ExpectOutputContains string `json:"expect_output_contains,omitempty"`

	// ModelStub is a modelstub script (modelstub.LoadScript) the suite
	// serves itself on a free loopback port for the run: every model role
	// of Base gets that endpoint's OpenAI-compatible base_url, so nobody
	// starts a model endpoint by hand. Relative paths in a profile file
	// resolve against the profile's directory.
	ModelStub string `json:"modelstub,omitempty"`
	// ModelStubAPI is the API family whose base URL the model roles get:
	// openai (default: the endpoint's /v1), anthropic or gemini.
	ModelStubAPI string `json:"modelstub_api,omitempty"`

	// CapabilitiesOnly: no runtime can be started here (the harness is not
	// installed); only discovery, planning and doctor items run.
	CapabilitiesOnly bool `json:"capabilities_only,omitempty"`
	// StartStopOnly: runtimes start and stop here, but invocations cannot
	// run (no model endpoint); items that need an invocation are skipped.
	StartStopOnly bool `json:"start_stop_only,omitempty"`
}

// Overlay changes the base config for one item.
type Overlay struct {
	// Settings are merged into harness.settings.
	Settings map[string]any `json:"settings,omitempty"`
	// Config is merged into the config (objects merge key by key; other
	// values replace).
	Config map[string]any `json:"config,omitempty"`
	// Env is added to the host's environment.
	Env map[string]string `json:"env,omitempty"`
	// Input, when set, replaces the profile's input for the item's
	// invocations.
	Input any `json:"input,omitempty"`
}

// FieldProbe is a config field the adapter must reject as unsupported.
type FieldProbe struct {
	// Field is the config.accepts name (for example "models.temperature").
	Field string `json:"field"`
	// Config is merged into the base config to set the field. It may be
	// omitted for the default probe fields, whose configs the suite builds.
	Config map[string]any `json:"config,omitempty"`
	// Path is the config path the rejection must name (default: the one
	// the suite builds for Field, or Field itself).
	Path string `json:"path,omitempty"`
}

// LoadProfile reads a profile from a YAML or JSON file (by extension;
// anything but .json is read as YAML). Unknown keys are errors. A relative
// descriptor path resolves against the file's directory.
func LoadProfile(path string) (Profile, error) {
	var p Profile
	data, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("profile: %w", err)
	}
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		var doc any
		if err := yaml.Load(data, &doc, yaml.WithUniqueKeys(true)); err != nil {
			return p, fmt.Errorf("profile %s: %w", path, err)
		}
		if data, err = json.Marshal(doc); err != nil {
			return p, fmt.Errorf("profile %s: %w", path, err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("profile %s: %w", path, err)
	}
	if p.Descriptor != "" && !filepath.IsAbs(p.Descriptor) {
		abs, err := filepath.Abs(filepath.Join(filepath.Dir(path), p.Descriptor))
		if err != nil {
			return p, fmt.Errorf("profile %s: %w", path, err)
		}
		p.Descriptor = abs
	}
	if p.ModelStub != "" && !filepath.IsAbs(p.ModelStub) {
		abs, err := filepath.Abs(filepath.Join(filepath.Dir(path), p.ModelStub))
		if err != nil {
			return p, fmt.Errorf("profile %s: %w", path, err)
		}
		p.ModelStub = abs
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("profile %s: %w", path, err)
	}
	return p, nil
}

// Validate reports a profile the suite cannot use.
func (p *Profile) Validate() error {
	var errs []error
	if strings.TrimSpace(p.AdapterID) == "" {
		errs = append(errs, errors.New("adapter_id is required"))
	}
	if p.UnsupportedField != nil && p.UnsupportedField.Field == "" {
		errs = append(errs, errors.New("unsupported_field.field is required"))
	}
	if p.CapabilitiesOnly && p.StartStopOnly {
		errs = append(errs, errors.New("capabilities_only and start_stop_only exclude each other"))
	}
	if p.ModelStubAPI != "" && !slices.Contains(modelstub.APIs(), p.ModelStubAPI) {
		errs = append(errs, fmt.Errorf("modelstub_api %q is not one of %s", p.ModelStubAPI, strings.Join(modelstub.APIs(), ", ")))
	}
	if p.ModelStubAPI != "" && p.ModelStub == "" {
		errs = append(errs, errors.New("modelstub_api without modelstub"))
	}
	if p.SecretEnv != "" && !isEnvName(p.SecretEnv) {
		errs = append(errs, fmt.Errorf("secret_env %q is not an environment variable name", p.SecretEnv))
	}
	return errors.Join(errs...)
}

func isEnvName(s string) bool {
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// BundledProfile returns the profile of a bundled adapter that has one
// (fabric.scripted and fabric.scripted.v1): every item applies to them.
func BundledProfile(adapterID string) (Profile, bool) {
	switch adapterID {
	case "fabric.scripted", "fabric.scripted.v1":
		return scriptedProfile(adapterID), true
	}
	return Profile{}, false
}

// scriptedProfile drives the scripted adapter's failure modes.
func scriptedProfile(id string) Profile {
	mode := func(m string) *Overlay { return &Overlay{Settings: map[string]any{"mode": m}} }
	return Profile{
		AdapterID: id,
		Base: map[string]any{
			"models": map[string]any{"default": map[string]any{"provider": "openai", "model": "conformance-model"}},
		},
		FailedInvoke:    mode("invoke_failure"),
		StartFailure:    mode("start_failure"),
		MalformedOutput: mode("malformed_output"),
		Hang:            mode("hang"),
		LeakStderr:      &Overlay{Settings: map[string]any{"stderr": "conformance: api key is " + SecretPlaceholder}},
		TurnOutput:      &Overlay{Settings: map[string]any{"response": "{turn}"}},
		SecretEnv:       DefaultSecretEnv,
		ExpectOutput:    "scripted: " + DefaultInput,
	}
}

// GenericProfile is the profile used for an adapter without one: the
// adapter id alone, start and stop only (no model endpoint is known), and
// every generated probe. descriptor may be empty.
func GenericProfile(adapterID, descriptor string) Profile {
	return Profile{AdapterID: adapterID, Descriptor: descriptor, StartStopOnly: true}
}
