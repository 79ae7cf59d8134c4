package plan

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
)

// Hard caps on lifecycle deadlines, in seconds. Descriptors and configs may
// lower them, never raise them.
const (
	MaxStartSeconds     = 90
	MaxStopSeconds      = 10
	MaxExitGraceSeconds = 2
	MaxInvokeSeconds    = 3600
)

// Options carries what planning needs besides the config.
type Options struct {
	BaseDir  string                // absolute base directory of the config
	Catalog  *catalog.Catalog      // discovered descriptors
	Warnings []contract.Diagnostic // findings from loading the config, copied into the plan
	// Packages checks harness.package against the support catalog; nil
	// fails every config that names a package.
	Packages PackageSelector
}

// Resolve plans cfg. On failure it returns every finding at once, joined;
// each is a *contract.ConfigError or *contract.CapabilityError with stage
// "plan", a stable code and the config path it concerns.
func Resolve(cfg contract.FabricConfig, opts Options) (*contract.RunPlan, error) {
	r := &resolver{cfg: &cfg}
	p := r.resolve(opts)
	if len(r.errs) > 0 {
		return nil, errors.Join(r.errs...)
	}
	return p, nil
}

// SelectedEntry returns the descriptor the config selects, or an error that
// names the known adapters.
func SelectedEntry(cfg *contract.FabricConfig, cat *catalog.Catalog) (*catalog.Entry, error) {
	if cfg.Harness == nil || strings.TrimSpace(cfg.Harness.AdapterID) == "" {
		return nil, configErr("missing_adapter", "harness.adapter_id", "no adapter selected: set harness.adapter_id")
	}
	id := cfg.Harness.AdapterID
	if cat == nil {
		return nil, configErr("unknown_adapter", "harness.adapter_id", fmt.Sprintf("adapter %q not found (no catalog)", id))
	}
	e, ok := cat.Lookup(id)
	if !ok {
		known := cat.IDs()
		return nil, configErr("unknown_adapter", "harness.adapter_id", fmt.Sprintf("adapter %q not found; known adapters: %s", id, strings.Join(known, ", ")))
	}
	return e, nil
}

type resolver struct {
	cfg   *contract.FabricConfig
	entry *catalog.Entry
	errs  []error
}

func configErr(code, path, msg string) error {
	return &contract.ConfigError{Failure: contract.Failure{Stage: contract.StagePlan, Code: code, Path: path, Message: msg}}
}

func (r *resolver) fail(code, path, msg string) { r.errs = append(r.errs, configErr(code, path, msg)) }

func (r *resolver) unsupported(code, path, msg string) {
	d := &r.entry.Descriptor
	r.errs = append(r.errs, &contract.CapabilityError{Failure: contract.Failure{
		Stage: contract.StagePlan, Code: code, Path: path,
		Message:  fmt.Sprintf("adapter %s does not support %s: %s", d.AdapterID, path, msg),
		Metadata: map[string]any{"adapter_id": d.AdapterID, "descriptor": r.entry.Path},
	}})
}

// requireAccept fails planning when a configured field is not in the
// descriptor's config.accepts. v1alpha1 descriptors may accept a coarse
// parent (tools, telemetry).
func (r *resolver) requireAccept(field, path string, coarse ...string) {
	d := &r.entry.Descriptor
	if d.Accepts(field) {
		return
	}
	if d.ContractVersion == contract.DescriptorV1Alpha1 {
		for _, c := range coarse {
			if d.Accepts(c) {
				return
			}
		}
	}
	r.unsupported("unsupported_field", path, fmt.Sprintf("%q is not in the descriptor's config.accepts", field))
}

func (r *resolver) resolve(opts Options) *contract.RunPlan {
	cfg := r.cfg
	entry, err := SelectedEntry(cfg, opts.Catalog)
	if err != nil {
		r.errs = append(r.errs, err)
		return nil
	}
	r.entry = entry
	d := &entry.Descriptor
	p := &contract.RunPlan{
		AgentName:         cfg.Metadata.Name,
		BaseDir:           opts.BaseDir,
		Config:            *cfg,
		AdapterDescriptor: entry.Resolved(),
	}
	if cfg.Harness.Resolution != nil {
		res := *cfg.Harness.Resolution
		p.Resolution = &res
	}
	r.selectPackage(p, opts.Packages)
	r.checkAdapterKind(p)
	r.checkSettings()
	r.checkInterfaces()
	p.ModelRole = r.checkModels()
	r.checkInstructions()
	if cfg.Runtime.MaxTurns != nil {
		r.requireAccept(contract.AcceptRuntimeMaxTurns, "runtime.max_turns")
	}
	p.Limits = r.limits()
	p.CapabilityPlan = r.capabilityPlan()
	r.checkWorkflow()
	p.TelemetryPlan = r.telemetry()
	p.EnvironmentPlan = r.environment()
	p.Capabilities = intersectCapabilities(d.Capabilities, p.HostProtocol)
	p.Diagnostics = r.diagnostics(opts)
	return p
}

func (r *resolver) checkAdapterKind(p *contract.RunPlan) {
	d := &r.entry.Descriptor
	switch d.AdapterKind {
	case contract.AdapterKindProcess, contract.AdapterKindPython:
	default:
		r.unsupported("unsupported_adapter_kind", "harness.adapter_id", fmt.Sprintf("adapter_kind %q has no local runtime binding (process and python are supported)", d.AdapterKind))
	}
	spec, err := d.RunnerSpec()
	if err != nil {
		r.unsupported("invalid_runner", "harness.adapter_id", err.Error())
		return
	}
	switch spec.Protocol {
	case "", contract.HostProtocolV1:
		p.HostProtocol = contract.HostProtocolV1
	case contract.HostProtocolV2:
		p.HostProtocol = contract.HostProtocolV2
	default:
		r.unsupported("unsupported_host_protocol", "harness.adapter_id", fmt.Sprintf("runner protocol %q is not %s or %s", spec.Protocol, contract.HostProtocolV1, contract.HostProtocolV2))
	}
	if d.AdapterKind == contract.AdapterKindProcess && spec.Command == "" && spec.Builtin == "" {
		r.unsupported("invalid_runner", "harness.adapter_id", "a process adapter's runner needs a command")
	}
}

func (r *resolver) checkSettings() {
	settings := r.cfg.Harness.Settings
	if r.entry.Settings == nil {
		if len(settings) > 0 {
			keys := sortedKeys(settings)
			r.unsupported("settings_not_accepted", "harness.settings."+keys[0], "the descriptor has no settings_schema, so only an empty settings map is accepted")
		}
		return
	}
	instance := settings
	if instance == nil {
		instance = map[string]any{}
	}
	for _, v := range r.entry.Settings.Validate(instance) {
		r.schemaViolation("invalid_settings", "harness.settings", "settings_schema", v)
	}
}

func (r *resolver) schemaViolation(code, prefix, schemaName string, v catalog.Violation) {
	d := &r.entry.Descriptor
	path := v.Path(prefix)
	r.errs = append(r.errs, &contract.ConfigError{Failure: contract.Failure{
		Stage: contract.StagePlan, Code: code, Path: path,
		Message:  fmt.Sprintf("%s (adapter %s, %s from %s)", v.Message, d.AdapterID, schemaName, r.entry.Path),
		Metadata: map[string]any{"adapter_id": d.AdapterID, "descriptor": r.entry.Path},
	}})
}

func (r *resolver) checkModels() string {
	cfg := r.cfg
	if len(cfg.Models) == 0 {
		return ""
	}
	r.requireAccept(contract.AcceptModels, "models")
	role, _, err := cfg.SelectedModel()
	if err != nil {
		r.fail("ambiguous_model_role", "models", err.Error())
	}
	for _, name := range sortedKeys(cfg.Models) {
		m := cfg.Models[name]
		base := "models." + name
		if m.BaseURL != nil {
			r.requireAccept(contract.AcceptModelsBaseURL, base+".base_url")
		}
		if m.Temperature != nil {
			r.requireAccept(contract.AcceptModelsTemperature, base+".temperature")
		}
		if m.TopP != nil {
			r.requireAccept(contract.AcceptModelsTopP, base+".top_p")
		}
		if m.MaxTokens != nil {
			r.requireAccept(contract.AcceptModelsMaxTokens, base+".max_tokens")
		}
		if r.entry.Model != nil {
			for _, v := range r.entry.Model.Validate(m) {
				r.schemaViolation("invalid_model", base, "model_schema", v)
			}
		}
	}
	return role
}

func (r *resolver) checkInstructions() {
	in := r.cfg.Instructions
	if in == nil || in.System == nil {
		return
	}
	r.requireAccept(contract.AcceptInstructionsSystem, "instructions.system")
	d := &r.entry.Descriptor
	if !d.Accepts(contract.AcceptInstructionsSystem) {
		return
	}
	mode := in.System.Mode
	if mode == "" {
		mode = contract.InstructionReplace
	}
	modes := d.Config.SystemInstructionModes
	if len(modes) == 0 {
		modes = []contract.InstructionMode{contract.InstructionReplace}
	}
	if !slices.Contains(modes, mode) {
		names := make([]string, len(modes))
		for i, m := range modes {
			names[i] = string(m)
		}
		r.unsupported("unsupported_instruction_mode", "instructions.system.mode", fmt.Sprintf("mode %q is not one of the descriptor's system_instruction_modes [%s]", mode, strings.Join(names, ", ")))
	}
}

func (r *resolver) checkWorkflow() {
	w := r.cfg.Workflow
	if w == nil {
		return
	}
	if r.entry.Workflow == nil {
		r.unsupported("unsupported_field", "workflow", "the descriptor has no workflow_schema")
		return
	}
	for _, v := range r.entry.Workflow.Validate(w) {
		r.schemaViolation("invalid_workflow", "workflow", "workflow_schema", v)
	}
}

func (r *resolver) limits() *contract.LifecycleLimits {
	l := &contract.LifecycleLimits{
		StartSeconds: MaxStartSeconds, StopSeconds: MaxStopSeconds,
		ExitGraceSeconds: MaxExitGraceSeconds, InvokeSeconds: MaxInvokeSeconds,
	}
	type field struct {
		name string
		cap  float64
		dst  *float64
	}
	fields := func(dst *contract.LifecycleLimits) []field {
		return []field{
			{"start_seconds", MaxStartSeconds, &dst.StartSeconds},
			{"stop_seconds", MaxStopSeconds, &dst.StopSeconds},
			{"exit_grace_seconds", MaxExitGraceSeconds, &dst.ExitGraceSeconds},
			{"invoke_seconds", MaxInvokeSeconds, &dst.InvokeSeconds},
		}
	}
	apply := func(src *contract.LifecycleLimits, prefix string) {
		if src == nil {
			return
		}
		srcFields, dstFields := fields(src), fields(l)
		for i, f := range srcFields {
			v := *f.dst
			switch {
			case v == 0:
			case v < 0:
				r.fail("invalid_limit", prefix+"."+f.name, "must be > 0")
			case v > f.cap:
				r.fail("limit_exceeds_cap", prefix+"."+f.name, fmt.Sprintf("%g s exceeds the hard cap of %g s", v, f.cap))
			default:
				*dstFields[i].dst = v
			}
		}
	}
	if dl := r.entry.Descriptor.Limits; dl != nil {
		apply(&contract.LifecycleLimits{StartSeconds: dl.StartSeconds, StopSeconds: dl.StopSeconds, ExitGraceSeconds: dl.ExitGraceSeconds, InvokeSeconds: dl.InvokeSeconds}, "descriptor.limits")
	}
	apply(r.cfg.Runtime.Limits, "runtime.limits")
	if ts := r.cfg.Runtime.TimeoutSeconds; ts != nil {
		switch {
		case *ts <= 0:
			r.fail("invalid_value", "runtime.timeout_seconds", "must be > 0")
		case *ts > MaxInvokeSeconds:
			r.fail("limit_exceeds_cap", "runtime.timeout_seconds", fmt.Sprintf("%g s exceeds the invoke backstop of %d s", *ts, MaxInvokeSeconds))
		case *ts < l.InvokeSeconds:
			l.InvokeSeconds = *ts
		}
	}
	return l
}

func (r *resolver) environment() *contract.EnvironmentConfig {
	env := contract.EnvironmentConfig{Provider: contract.EnvironmentLocal}
	if r.cfg.Environment != nil {
		env = *r.cfg.Environment
	}
	if env.ControlLocation == "" {
		env.ControlLocation = contract.ControlInEnv
	}
	if env.Ownership == "" {
		env.Ownership = contract.OwnershipCaller
	}
	if env.Provider != contract.EnvironmentLocal {
		r.fail("unsupported_environment_provider", "environment.provider", fmt.Sprintf("environment provider %q is not available (supported: %s)", env.Provider, contract.EnvironmentLocal))
	}
	return &env
}

func (r *resolver) telemetry() *contract.TelemetryPlan {
	cfg := r.cfg
	d := &r.entry.Descriptor
	tp := &contract.TelemetryPlan{Providers: []string{}, AdapterOutputs: []string{}}
	if cfg.Telemetry != nil {
		for _, name := range sortedKeys(cfg.Telemetry.Providers) {
			path := "telemetry.providers." + name
			if name != contract.TelemetryRelay && name != contract.TelemetryNative {
				r.fail("unknown_telemetry_provider", path, fmt.Sprintf("unknown telemetry provider %q (want relay or native)", name))
				continue
			}
			support, ok := d.Telemetry.Providers[name]
			if !ok && !(d.ContractVersion == contract.DescriptorV1Alpha1 && d.Accepts(contract.AcceptTelemetry)) {
				r.unsupported("unsupported_telemetry_provider", path, "the descriptor declares no "+name+" telemetry support")
				continue
			}
			tp.Providers = append(tp.Providers, name)
			tp.AdapterOutputs = append(tp.AdapterOutputs, support.Outputs...)
			if name == contract.TelemetryNative {
				tp.NativeConfig = cfg.Telemetry.Providers[name].Config
			}
		}
	}
	tp.RelayEnabled = slices.Contains(tp.Providers, contract.TelemetryRelay)
	if tp.RelayEnabled {
		tp.RelayConfig = cfg.Relay
		if s, ok := cfg.Relay["output_dir"].(string); ok {
			tp.RelayOutputDir = &s
		}
		if s, ok := cfg.Relay["project"].(string); ok {
			tp.RelayProject = &s
		}
	}
	slices.Sort(tp.AdapterOutputs)
	tp.AdapterOutputs = slices.Compact(tp.AdapterOutputs)
	return tp
}

func (r *resolver) diagnostics(opts Options) []contract.Diagnostic {
	var out []contract.Diagnostic
	out = append(out, opts.Warnings...)
	if opts.Catalog != nil {
		out = append(out, opts.Catalog.Diagnostics()...)
	}
	cfg := r.cfg
	if len(cfg.Relay) > 0 && (cfg.Telemetry == nil || cfg.Telemetry.Providers[contract.TelemetryRelay].Config == nil && !hasKey(cfg.Telemetry.Providers, contract.TelemetryRelay)) {
		out = append(out, contract.Diagnostic{Severity: contract.SeverityWarning, Code: "relay_not_enabled", Path: "relay", Message: "relay is configured but telemetry.providers.relay is not set, so Relay stays off"})
	}
	return out
}

func intersectCapabilities(c contract.RuntimeCapabilities, protocol string) contract.RuntimeCapabilities {
	out := contract.RuntimeCapabilities{Metadata: c.Metadata}
	v2 := protocol == contract.HostProtocolV2
	out.Streaming = c.Streaming && v2
	out.Cancellation = c.Cancellation && v2
	// Services run on v2 hosts only (service_start / service_attach);
	// live config updates have no binding yet.
	out.Service = c.Service && v2
	return out
}

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
