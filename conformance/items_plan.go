package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

// Suffixes of the adapter ids the discovery item gives its copies.
const (
	installedSuffix = ".conformance-installed"
	baseDirSuffix   = ".conformance-base-dir"
)

// invalidKey is the unknown setting that a closed settings schema must
// refuse.
const invalidKey = "__conformance_invalid__"

// discovery finds the adapter, then proves the installed data-dir and
// <base_dir>/adapters conventions with copies of its descriptor under new
// ids, plans both and starts the base_dir copy.
func discovery(ctx context.Context, t *itemT) (string, error) {
	s := t.s
	if s.info == nil {
		return "", s.findErr
	}
	info := s.info
	prefix, baseDir := filepath.Join(t.dir, "prefix"), filepath.Join(t.dir, "base")
	instID, baseID := info.AdapterID+installedSuffix, info.AdapterID+baseDirSuffix
	if err := writeDescriptorCopy(info, instID, filepath.Join(prefix, "share", "nemo-fabric", "adapters", instID)); err != nil {
		return "", err
	}
	if err := writeDescriptorCopy(info, baseID, filepath.Join(baseDir, "adapters", baseID)); err != nil {
		return "", err
	}
	c, _, err := t.clientFor(map[string]*string{"FABRIC_ADAPTER_PREFIXES": &prefix})
	if err != nil {
		return "", err
	}
	infos, _, err := c.Adapters(ctx, baseDir, nil)
	if err != nil {
		return "", fmt.Errorf("discover copies: %w", err)
	}
	for id, source := range map[string]string{instID: contract.SourceInstalled, baseID: contract.SourceBaseDir} {
		if err := expectSource(infos, id, source); err != nil {
			return "", err
		}
		d := s.profile.config()
		object(d, "harness")["adapter_id"] = id
		p, err := t.planIn(ctx, c, d, baseDir)
		if err != nil {
			return "", fmt.Errorf("plan the %s copy %s: %w", source, id, err)
		}
		if got := p.AdapterDescriptor.Source; got != source {
			return "", fmt.Errorf("the plan of %s took its descriptor from %q, want %q", id, got, source)
		}
	}
	detail := fmt.Sprintf("found in %s (%s); copies found as installed and base_dir and planned", info.Source, info.Path)
	if s.profile.CapabilitiesOnly {
		return detail, nil
	}
	d := s.profile.config()
	object(d, "harness")["adapter_id"] = baseID
	if err := t.runCopy(ctx, c, d, baseDir); err != nil {
		return "", fmt.Errorf("the base_dir copy %s: %w", baseID, err)
	}
	return detail + "; the base_dir copy runs", nil
}

// runCopy starts a config planned in baseDir, invokes it once when the
// profile allows and stops it.
func (t *itemT) runCopy(ctx context.Context, c *fabric.Client, d doc, baseDir string) error {
	p, err := t.planIn(ctx, c, d, baseDir)
	if err != nil {
		return err
	}
	rt, err := c.StartPlan(ctx, p)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	t.runtimes = append(t.runtimes, rt)
	if !t.s.profile.StartStopOnly {
		res, err := rt.Invoke(ctx, t.s.profile.input(nil))
		if err != nil {
			return fmt.Errorf("invoke: %w", err)
		}
		if err := t.s.succeeded(res); err != nil {
			return err
		}
	}
	if _, err := rt.Stop(ctx); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	return nil
}

func expectSource(infos []fabric.AdapterInfo, id, source string) error {
	for _, i := range infos {
		if i.AdapterID == id {
			if i.Source != source {
				return fmt.Errorf("%s was discovered as %s, want %s (%s)", id, i.Source, source, i.Path)
			}
			return nil
		}
	}
	return fmt.Errorf("the %s copy %s was not discovered", source, id)
}

// writeDescriptorCopy writes the descriptor under a new id to
// dir/<id>.fabric-adapter.json. Relative runner paths are made absolute
// against the original's directory so that the copy runs the same host.
func writeDescriptorCopy(info *fabric.AdapterInfo, id, dir string) error {
	raw, root, err := descriptorJSON(info)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var d doc
	if err := dec.Decode(&d); err != nil {
		return fmt.Errorf("descriptor %s: %w", info.Path, err)
	}
	d["adapter_id"] = id
	if runner, ok := d["runner"].(map[string]any); ok && root != "" {
		absolutizeRunner(runner, root)
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, id+".fabric-adapter.json"), out, 0o644)
}

// descriptorJSON is the descriptor as written on disk, or as parsed for
// a bundled one, with the directory its relative paths resolve against.
func descriptorJSON(info *fabric.AdapterInfo) ([]byte, string, error) {
	if info.Source != contract.SourceBundled && filepath.IsAbs(info.Path) {
		raw, err := os.ReadFile(info.Path)
		return raw, filepath.Dir(info.Path), err
	}
	raw, err := json.Marshal(info.Descriptor)
	return raw, "", err
}

func absolutizeRunner(runner doc, root string) {
	if cmd, ok := runner["command"].(string); ok && strings.ContainsRune(cmd, '/') && !filepath.IsAbs(cmd) {
		runner["command"] = filepath.Join(root, cmd)
	}
	for _, key := range []string{"script", "cwd"} {
		if v, ok := runner[key].(string); ok && v != "" && !filepath.IsAbs(v) {
			runner[key] = filepath.Join(root, v)
		}
	}
}

// smallestPlan plans the smallest config and checks the plan.
func smallestPlan(ctx context.Context, t *itemT) (string, error) {
	p := &t.s.profile
	d := merge(p.skeleton(), p.Smallest)
	plan, err := t.plan(ctx, t.s.client, d)
	if err != nil {
		return "", fmt.Errorf("the smallest config does not plan: %w", err)
	}
	if err := t.validate("run-plan", plan); err != nil {
		return "", err
	}
	if plan.AdapterDescriptor == nil || plan.AdapterDescriptor.Descriptor.AdapterID != p.AdapterID {
		return "", fmt.Errorf("the plan selected another adapter: %s", marshal(plan.AdapterDescriptor))
	}
	switch plan.HostProtocol {
	case contract.HostProtocolV1, contract.HostProtocolV2:
	default:
		return "", fmt.Errorf("the plan's host protocol is %q", plan.HostProtocol)
	}
	for _, diag := range plan.Diagnostics {
		if diag.Severity == contract.SeverityError {
			return "", fmt.Errorf("the plan carries an error diagnostic: %s: %s", diag.Code, diag.Message)
		}
	}
	return fmt.Sprintf("planned from %s, protocol %s, %d diagnostics", plan.AdapterDescriptor.Source, plan.HostProtocol, len(plan.Diagnostics)), nil
}

// unsupportedField plans the base config plus a field the descriptor does
// not accept and expects unsupported_field naming adapter and field.
func unsupportedField(ctx context.Context, t *itemT) (string, error) {
	probe, err := t.unsupportedProbe()
	if err != nil {
		return "", err
	}
	d := merge(t.s.profile.config(), probe.Config)
	_, err = t.plan(ctx, t.s.client, d)
	if err == nil {
		return "", fmt.Errorf("a config with %s planned, but the descriptor does not accept it", probe.Field)
	}
	var found *fabric.CapabilityError
	for _, leaf := range leaves(err) {
		var ce *fabric.CapabilityError
		if errors.As(leaf, &ce) && ce.Code == "unsupported_field" && ce.Path == probe.Path {
			found = ce
			break
		}
	}
	if found == nil {
		return "", fmt.Errorf("want a CapabilityError unsupported_field at %s, got: %s", probe.Path, describeErrors(err))
	}
	for _, want := range []string{t.s.profile.AdapterID, probe.Path} {
		if !strings.Contains(found.Message, want) {
			return "", fmt.Errorf("the rejection does not name %q: %s", want, found.Message)
		}
	}
	return fmt.Sprintf("%s rejected: %s", probe.Field, found.Message), nil
}

// probeFields are the default unsupported-field probes, in order.
var probeFields = []string{
	contract.AcceptModelsTemperature, contract.AcceptRuntimeMaxTurns,
	contract.AcceptToolsBlocked, contract.AcceptSkills, contract.AcceptMCP,
}

// unsupportedProbe is the profile's probe, completed, or the first default
// probe field the descriptor does not accept.
func (t *itemT) unsupportedProbe() (*FieldProbe, error) {
	base := t.s.profile.config()
	if fp := t.s.profile.UnsupportedField; fp != nil {
		out := *fp
		if out.Config == nil {
			built, ok := t.buildProbe(fp.Field, base)
			if !ok {
				return nil, fmt.Errorf("profile: unsupported_field %s needs a config", fp.Field)
			}
			out.Config = built.Config
			if out.Path == "" {
				out.Path = built.Path
			}
		}
		if out.Path == "" {
			out.Path = out.Field
		}
		return &out, nil
	}
	d := t.s.info.Descriptor
	if d == nil {
		return nil, skipf("the descriptor is not available")
	}
	for _, f := range probeFields {
		if accepted(d, f) {
			continue
		}
		if fp, ok := t.buildProbe(f, base); ok {
			return fp, nil
		}
	}
	return nil, skipf("the descriptor accepts every default probe field %v; give unsupported_field in a profile", probeFields)
}

// buildProbe builds the config setting one default probe field.
func (t *itemT) buildProbe(field string, base doc) (*FieldProbe, bool) {
	switch field {
	case contract.AcceptModelsTemperature:
		role := modelRole(base)
		model := doc{"temperature": 0.5}
		if role == "" {
			// Without a model role, add one; only where models are accepted,
			// or the rejection would name models instead.
			if d := t.s.info.Descriptor; d == nil || !accepted(d, contract.AcceptModels) {
				return nil, false
			}
			role, model["provider"], model["model"] = "default", "openai", "conformance-model"
		}
		return &FieldProbe{Field: field, Path: "models." + role + ".temperature",
			Config: doc{"models": doc{role: model}}}, true
	case contract.AcceptRuntimeMaxTurns:
		return &FieldProbe{Field: field, Path: "runtime.max_turns", Config: doc{"runtime": doc{"max_turns": 3}}}, true
	case contract.AcceptToolsBlocked:
		return &FieldProbe{Field: field, Path: "tools.blocked", Config: doc{"tools": doc{"blocked": []any{"conformance_blocked_tool"}}}}, true
	case contract.AcceptSkills:
		return &FieldProbe{Field: field, Path: "skills.paths", Config: doc{"skills": doc{"paths": []any{t.dir}}}}, true
	case contract.AcceptMCP:
		return &FieldProbe{Field: field, Path: "mcp.servers", Config: doc{"mcp": doc{"servers": doc{
			"conformance": doc{"transport": contract.MCPTransportStdio, "url": "conformance-mcp-server", "exposure": contract.MCPExposureHarnessNative},
		}}}}, true
	}
	return nil, false
}

// accepted reports whether the descriptor accepts field, counting the
// coarse v1alpha1 "tools" entry.
func accepted(d *contract.AdapterDescriptor, field string) bool {
	if d.Accepts(field) {
		return true
	}
	return d.ContractVersion == contract.DescriptorV1Alpha1 && strings.HasPrefix(field, "tools.") && d.Accepts(contract.AcceptTools)
}

// invalidSettings plans settings the descriptor must refuse.
func invalidSettings(ctx context.Context, t *itemT) (string, error) {
	d := t.s.info.Descriptor
	if d == nil {
		return "", skipf("the descriptor is not available")
	}
	settings, why := t.s.profile.InvalidSettings, "from the profile"
	if settings == nil {
		var err error
		if settings, why, err = generateInvalidSettings(d.SettingsSchema); err != nil {
			return "", err
		}
	}
	wantCode := "invalid_settings"
	if len(bytes.TrimSpace(d.SettingsSchema)) == 0 || string(bytes.TrimSpace(d.SettingsSchema)) == "null" {
		wantCode = "settings_not_accepted"
	}
	_, err := t.plan(ctx, t.s.client, t.s.profile.config(&Overlay{Settings: settings}))
	if err == nil {
		return "", fmt.Errorf("settings %s (%s) planned, want %s", marshal(settings), why, wantCode)
	}
	for _, leaf := range leaves(err) {
		info := fabric.ErrorInfo(leaf)
		if info == nil || info.Code != wantCode {
			continue
		}
		path, _ := info.Metadata["path"].(string)
		if path != "harness.settings" && !strings.HasPrefix(path, "harness.settings.") {
			return "", fmt.Errorf("%s names path %q, want one under harness.settings", wantCode, path)
		}
		return fmt.Sprintf("settings %s (%s) rejected: %s at %s", marshal(settings), why, wantCode, path), nil
	}
	return "", fmt.Errorf("settings %s (%s): want %s, got: %s", marshal(settings), why, wantCode, describeErrors(err))
}

// generateInvalidSettings builds settings that the schema refuses: an
// unknown key for a closed (or absent) schema, else a value of the wrong
// type for the first typed property.
func generateInvalidSettings(raw json.RawMessage) (map[string]any, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return doc{invalidKey: true}, "no settings_schema, so any setting is refused", nil
	}
	var schema doc
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, "", skipf("settings_schema is not an object; give invalid_settings in a profile")
	}
	if schema["additionalProperties"] == false || schema["unevaluatedProperties"] == false {
		return doc{invalidKey: true}, "unknown key in a closed schema", nil
	}
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ps, _ := props[n].(map[string]any)
		if v, ok := wrongValue(ps); ok {
			return doc{n: v}, "wrong type for " + n, nil
		}
	}
	return nil, "", skipf("open settings_schema without typed properties; give invalid_settings in a profile")
}

// wrongValue returns a value the property schema refuses.
func wrongValue(ps doc) (any, bool) {
	if ps == nil {
		return nil, false
	}
	if _, ok := ps["enum"]; ok {
		return invalidKey, true
	}
	if _, ok := ps["const"]; ok {
		return invalidKey, true
	}
	var types []string
	switch tv := ps["type"].(type) {
	case string:
		types = []string{tv}
	case []any:
		for _, e := range tv {
			if s, ok := e.(string); ok {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		return nil, false
	}
	candidates := []struct {
		kind  []string
		value any
	}{
		{[]string{"integer", "number"}, 12345},
		{[]string{"string"}, "conformance-invalid"},
		{[]string{"boolean"}, true},
		{[]string{"object"}, doc{}},
		{[]string{"array"}, []any{}},
	}
	for _, c := range candidates {
		if !slices.ContainsFunc(c.kind, func(k string) bool { return slices.Contains(types, k) }) {
			return c.value, true
		}
	}
	return nil, false
}

// doctorEnv runs doctor with the secret variable unset and then set.
func doctorEnv(ctx context.Context, t *itemT) (string, error) {
	name, d, err := t.secretConfig()
	if err != nil {
		return "", err
	}
	missing, err := t.doctor(ctx, d, map[string]*string{name: nil})
	if err != nil {
		return "", err
	}
	check := findCheck(missing, "env:"+name)
	switch {
	case check == nil:
		return "", fmt.Errorf("with %s unset the report has no check env:%s", name, name)
	case check.Status != contract.DoctorFail:
		return "", fmt.Errorf("with %s unset, check env:%s is %s, want fail", name, name, check.Status)
	case missing.Status != contract.DoctorFail:
		return "", fmt.Errorf("with %s unset the report's status is %s, want fail", name, missing.Status)
	}
	value := sentinel()
	set, err := t.doctor(ctx, d, map[string]*string{name: &value})
	if err != nil {
		return "", err
	}
	check = findCheck(set, "env:"+name)
	switch {
	case check == nil:
		return "", fmt.Errorf("with %s set the report has no check env:%s", name, name)
	case check.Status != contract.DoctorPass:
		return "", fmt.Errorf("with %s set, check env:%s is %s (%s), want pass", name, name, check.Status, check.Message)
	case strings.Contains(marshal(set), value):
		return "", fmt.Errorf("the doctor report contains the value of %s", name)
	}
	return fmt.Sprintf("env:%s fails when unset (report fail) and passes when set (report %s), value never shown", name, set.Status), nil
}

// secretConfig is the base config naming the profile's secret variable as
// its model's api_key_env, or a skip.
func (t *itemT) secretConfig() (string, doc, error) {
	p := &t.s.profile
	base := p.config()
	switch {
	case p.SecretEnv == "":
		return "", nil, skipf("the profile names no secret_env")
	case modelRole(base) == "":
		return "", nil, skipf("the base config selects no model role to carry api_key_env")
	}
	return p.SecretEnv, withAPIKeyEnv(base, p.SecretEnv), nil
}

// doctor runs doctor on d with a client whose environment is changed by
// extra, and validates the report.
func (t *itemT) doctor(ctx context.Context, d doc, extra map[string]*string) (contract.DoctorReport, error) {
	c, _, err := t.clientFor(extra)
	if err != nil {
		return contract.DoctorReport{}, err
	}
	l, err := t.load(c, d)
	if err != nil {
		return contract.DoctorReport{}, fmt.Errorf("load: %w", err)
	}
	rep := c.Doctor(ctx, l)
	return rep, t.validate("doctor-report", rep)
}

func findCheck(rep contract.DoctorReport, name string) *contract.DoctorCheck {
	for i := range rep.Checks {
		if rep.Checks[i].Name == name {
			return &rep.Checks[i]
		}
	}
	return nil
}

// sentinel is a fresh secret value that appears nowhere else.
func sentinel() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "fabric-conformance-secret-" + hex.EncodeToString(b)
}

// leaves flattens joined errors.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// describeErrors lists every finding of err as "code at path".
func describeErrors(err error) string {
	var parts []string
	for _, leaf := range leaves(err) {
		if info := fabric.ErrorInfo(leaf); info != nil {
			path, _ := info.Metadata["path"].(string)
			parts = append(parts, fmt.Sprintf("%s at %q", info.Code, path))
			continue
		}
		parts = append(parts, leaf.Error())
	}
	return strings.Join(parts, "; ")
}
