package doctor

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
)

func entry(t *testing.T, doc string) *catalog.Entry {
	t.Helper()
	e, err := catalog.LoadDescriptor([]byte(doc), "d.json")
	if err != nil {
		t.Fatal(err)
	}
	e.Root = t.TempDir()
	return e
}

func TestChecks(t *testing.T) {
	key := "DOCTOR_TEST_KEY"
	cfg := &contract.FabricConfig{SchemaVersion: contract.ConfigSchemaVersion, Metadata: contract.MetadataConfig{Name: "a"},
		Models: map[string]contract.ModelConfig{"default": {Provider: "p", Model: "m", APIKeyEnv: &key}}}
	e := entry(t, `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"t.a","adapter_kind":"process",
		"runner":{"command":"sh"},
		"requirements":{"binaries":["sh","no-such-binary-zz"],"env":["DOCTOR_TEST_OTHER"],"files":["nope.txt"],"version_args":{"sh":["-c","echo sh 1.2.3"]}},
		"doctor":[{"name":"probe","command":"sh","args":["-c","echo ready"],"version":true},{"name":"bad","command":"sh","args":["-c","exit 3"]}]}`)
	env := map[string]string{"DOCTOR_TEST_KEY": "secret-value-xyz", "DOCTOR_TEST_OTHER": ""}
	rep := Run(context.Background(), Input{AgentName: "a", Config: cfg, Entry: e, Plan: &contract.RunPlan{}},
		Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	want := map[string]string{
		"config": "pass", "descriptor": "pass", "plan": "pass",
		"binary:sh": "pass", "binary:no-such-binary-zz": "fail", "file:nope.txt": "fail",
		"env:DOCTOR_TEST_KEY": "pass", "env:DOCTOR_TEST_OTHER": "fail",
		"adapter:probe": "pass", "adapter:bad": "fail",
	}
	got := map[string]contract.DoctorCheck{}
	for _, c := range rep.Checks {
		got[c.Name] = c
	}
	for name, status := range want {
		if got[name].Status != status {
			t.Errorf("%s = %q (%s), want %s", name, got[name].Status, got[name].Message, status)
		}
	}
	if v := got["binary:sh"].Metadata["version"]; v != "sh 1.2.3" {
		t.Errorf("version = %v", v)
	}
	if got["adapter:probe"].Message != "ready" {
		t.Errorf("probe message %q", got["adapter:probe"].Message)
	}
	if rep.Status != contract.DoctorFail || rep.AdapterID != "t.a" {
		t.Errorf("report %s %s", rep.Status, rep.AdapterID)
	}
	for _, c := range rep.Checks {
		if strings.Contains(c.Message, "secret-value-xyz") {
			t.Fatal("doctor printed a secret value")
		}
	}
}

func TestPlanFindingsBecomeChecks(t *testing.T) {
	perr := errors.Join(
		&contract.CapabilityError{Failure: contract.Failure{Stage: "plan", Code: "unsupported_field", Path: "skills.paths", Message: "x"}},
		&contract.ConfigError{Failure: contract.Failure{Stage: "plan", Code: "invalid_settings", Path: "harness.settings.a", Message: "y"}},
	)
	rep := Run(context.Background(), Input{PlanErr: perr}, Options{})
	if len(rep.Checks) != 2 || rep.Checks[0].Name != "plan.unsupported_field" || rep.Checks[1].Metadata["path"] != "harness.settings.a" || rep.Status != contract.DoctorFail {
		t.Fatalf("checks %+v", rep.Checks)
	}
}

// A binary that CheckExec refuses fails its check and is not run.
func TestCheckExec(t *testing.T) {
	marker := t.TempDir() + "/ran"
	e := entry(t, `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"t.a","adapter_kind":"process",
		"runner":{"command":"sh"},
		"requirements":{"binaries":["sh"],"version_args":{"sh":["-c","touch `+marker+`"]}},
		"doctor":[{"name":"probe","command":"sh","args":["-c","touch `+marker+`"]}]}`)
	refuse := errors.New("package x@1: bin/sh changed since install [artifact_digest_mismatch]")
	rep := Run(context.Background(), Input{AgentName: "a", Config: &contract.FabricConfig{}, Entry: e, Plan: &contract.RunPlan{}},
		Options{LookupEnv: func(string) (string, bool) { return "", false }, CheckExec: func(string) error { return refuse }})
	for _, c := range rep.Checks {
		if (c.Name == "binary:sh" || c.Name == "adapter:probe") && (c.Status != contract.DoctorFail || !strings.Contains(c.Message, "artifact_digest_mismatch")) {
			t.Errorf("%s = %s %q; want a failure naming the mismatch", c.Name, c.Status, c.Message)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("doctor ran a binary CheckExec refused")
	}
}
