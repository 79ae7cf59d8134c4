//go:build linux

package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fabric-runtime/fabric/internal/deploy"
)

const refusalUID = "3a7c1e52-9b0d-4f6e-8a21-c4d5e6f70812"

// refusalDoc is a one-agent document; extra is spliced into spec.
func refusalDoc(uid, integrations, refs string) string {
	return fmt.Sprintf(`schema_version: fabric.deployment/v1alpha1
metadata: {name: refuse, uid: %s}
spec:
  supervisor: {kind: process}
%s  sandboxes:
    - name: main
      agents:
        - name: solo
          integrationRefs: [%s]
          fabric:
            schema_version: fabric.agent/v1alpha1
            metadata: {name: solo}
            runtime: {}
            harness: {adapter_id: fabric.scripted}
`, uid, integrations, refs)
}

// TestApplyRefusals is acceptance 7: every refusal of apply (and the
// document rules apply reports) with its exact code, before anything is
// started or any state is rewritten.
func TestApplyRefusals(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port
	intent := func(fields string) string {
		return `{"format_version":"fabric.deploy.intent/v1alpha1","name":"refuse","uid":"` + refusalUID + `","generations":{}` + fields + `}`
	}
	cases := []struct {
		name    string
		doc     string
		intent  string // intent.json written before apply
		env     map[string]string
		lock    bool // hold deployment.lock
		code    string
		details []string // document findings: "code@path"
		message string   // a part of the message
	}{
		{name: "unknown reference", doc: refusalDoc(refusalUID, "", "nope"), code: deploy.CodeDocumentInvalid,
			details: []string{"unknown_reference@spec.sandboxes[0].agents[0].integrationRefs[0]"}},
		{name: "duplicate reference", doc: refusalDoc(refusalUID, "  integrations:\n    m: {kind: inference, api: openai-responses, base_url: \"http://127.0.0.1:9/v1\"}\n", "m, m"), code: deploy.CodeDocumentInvalid,
			details: []string{"duplicate_reference@spec.sandboxes[0].agents[0].integrationRefs[1]"}},
		{name: "credential as a value", doc: refusalDoc(refusalUID, "  integrations:\n    m: {kind: inference, api: openai-responses, base_url: \"http://127.0.0.1:9/v1\", credential: sk-plain-value}\n", "m"), code: deploy.CodeDocumentInvalid,
			details: []string{"invalid_credential@spec.integrations.m.credential"}},
		{name: "uid changed", doc: refusalDoc(refusalUID, "", ""), intent: strings.Replace(intent(`,"digest":"x"`), refusalUID, "11111111-2222-4333-8444-555555555555", 1), code: deploy.CodeUIDChanged},
		{name: "destroy unfinished", doc: refusalDoc(refusalUID, "", ""), intent: intent(`,"destroying":true`), code: deploy.CodeDestroyUnfinished},
		{name: "pending apply of another document", doc: refusalDoc(refusalUID, "", ""), intent: intent(`,"pending":true,"pending_digest":"0123456789abcdef"`), code: deploy.CodePendingOtherDigest, message: "0123456789ab"},
		{name: "intent of another format", doc: refusalDoc(refusalUID, "", ""), intent: `{"format_version":"fabric.deploy.intent/v0"}`, code: deploy.CodeUnsupportedStateFormat},
		{name: "another operation holds the lock", doc: refusalDoc(refusalUID, "", ""), lock: true, code: deploy.CodeStateLocked},
		{name: "env credential not set", doc: refusalDoc(refusalUID, "  integrations:\n    m: {kind: inference, api: openai-responses, base_url: \"http://127.0.0.1:9/v1\", credential: {env: FABRIC_REFUSAL_UNSET}, brokered: true}\n", "m"),
			code: deploy.CodeCredentialMissing, message: "FABRIC_REFUSAL_UNSET"},
		{name: "port held by a foreign process", doc: refusalDoc(refusalUID, fmt.Sprintf("  integrations:\n    t: {kind: mcpServer, transport: http, run: {command: [sleep, \"60\"], port: %d}}\n", heldPort), "t"),
			code: deploy.CodeResourceTaken, message: fmt.Sprintf("pid %d", os.Getpid())},
		{name: "external supervisor not running", doc: strings.Replace(refusalDoc(refusalUID, "", ""), "{kind: process}", "{kind: external, socket: /nonexistent/fabric.sock}", 1), code: deploy.CodeSupervisorUnreachable},
		{name: "agent config missing", doc: refusalDoc(refusalUID, "", "")[:strings.Index(refusalDoc(refusalUID, "", ""), "          fabric:")] + "          config: ./missing.yaml\n",
			code: deploy.CodeConfigInvalid, message: "missing.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "deploy.yaml")
			if err := os.WriteFile(file, []byte(c.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			stateDir := filepath.Join(dir, ".fabric", "refuse")
			if err := os.MkdirAll(stateDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if c.intent != "" {
				if err := os.WriteFile(filepath.Join(stateDir, deploy.IntentFile), []byte(c.intent), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.lock {
				f, err := os.OpenFile(filepath.Join(stateDir, deploy.LockFile), os.O_CREATE|os.O_RDWR, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
					t.Fatal(err)
				}
			}
			lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
			_, err := deploy.Apply(context.Background(), deploy.Options{File: file, Executable: filepath.Join(bins, "fabric"), LookupEnv: lookup})
			var de *deploy.Error
			if !errors.As(err, &de) {
				t.Fatalf("apply: %v, want a *deploy.Error %s", err, c.code)
			}
			if de.Code != c.code || !strings.Contains(de.Message, c.message) {
				t.Fatalf("apply: %s: %s, want %s (with %q)", de.Code, de.Message, c.code, c.message)
			}
			var got []string
			for _, d := range de.Details {
				got = append(got, d.Code+"@"+d.Path)
			}
			for _, want := range c.details {
				if !slices.Contains(got, want) {
					t.Fatalf("findings %v, want %s", got, want)
				}
			}
			if _, err := os.Stat(filepath.Join(stateDir, "supervisor.sock")); err == nil {
				t.Fatal("a refused apply started a supervisor")
			}
			if c.intent != "" {
				if b, _ := os.ReadFile(filepath.Join(stateDir, deploy.IntentFile)); string(b) != c.intent {
					t.Fatalf("a refused apply rewrote intent.json:\n%s", b)
				}
			}
		})
	}
}

// TestExportRefusals: export of a deployment never applied, or of a
// document changed since, is refused.
func TestExportRefusals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "deploy.yaml")
	if err := os.WriteFile(file, []byte(refusalDoc(refusalUID, "", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := deploy.Export(context.Background(), deploy.Options{File: file})
	var de *deploy.Error
	if !errors.As(err, &de) || de.Code != deploy.CodeNotApplied {
		t.Fatalf("export before apply: %v", err)
	}
	stateDir := filepath.Join(dir, ".fabric", "refuse")
	os.MkdirAll(stateDir, 0o700)
	os.WriteFile(filepath.Join(stateDir, deploy.IntentFile), []byte(`{"format_version":"fabric.deploy.intent/v1alpha1","name":"refuse","uid":"`+refusalUID+`","digest":"other","generations":{}}`), 0o600)
	_, err = deploy.Export(context.Background(), deploy.Options{File: file})
	if !errors.As(err, &de) || de.Code != deploy.CodeDrifted {
		t.Fatalf("export of a changed document: %v", err)
	}
}
