package harnessui

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/contract/validate"
)

// anyToken matches what a token looks like (256 bits in hex), so outputs of
// failed starts, whose tokens the test never sees, can be scanned too.
var anyToken = regexp.MustCompile(`[0-9a-f]{64}`)

// TestTokenNeverReported (T1): no token value appears in the handle-side
// report, a RuntimeHandle carrying it, check results, log records, errors,
// launchers or markers; only the token files and the children's
// environments hold it.
func TestTokenNeverReported(t *testing.T) {
	log := &testLog{}
	dash := testChild(t, "dashboard", freePort(t), envTokenEnv+"=DEMO_TOKEN")
	dash.Browser, dash.Credential, dash.TokenEnv, dash.ReadyPath = true, contract.CredentialBearer, "DEMO_TOKEN", "/auth"
	term := Child{Name: "terminal", Kind: contract.InterfaceTerminal, Credential: contract.CredentialBearer,
		Launcher: &Launcher{Argv: []string{"true"}, TokenEnv: "TERM_TOKEN"}}
	spec := testSpec(t, log, dash, term)
	set := mustStart(t, spec)
	secrets := []string{set.Token("dashboard"), set.Token("terminal")}
	for _, s := range secrets {
		if len(s) != 64 {
			t.Fatalf("token of %d bytes", len(s))
		}
	}

	var outputs []string
	add := func(what string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, what+": "+string(b))
	}
	add("interfaces", set.Interfaces())
	handle := contract.RuntimeHandle{
		RuntimeID: runtimeID, RuntimeBinding: "fabric-runtime-binding-x", AgentName: "a", Harness: "demo", AdapterKind: "process",
		Environment: contract.EnvironmentHandle{EnvironmentID: "environment-1", Provider: "local", ControlLocation: "in_env_control", Ownership: "caller_owned"},
		Interfaces:  set.Interfaces(),
	}
	hb, _ := json.Marshal(handle)
	if err := validate.Validate("runtime-handle", hb); err != nil {
		t.Errorf("the handle does not validate: %v", err)
	}
	outputs = append(outputs, "handle: "+string(hb))
	ctx := stopCtx(t)
	for _, name := range []string{"dashboard", "terminal"} {
		for _, level := range []string{"live", "active", "ready"} {
			add("check "+name+" "+level, set.Check(ctx, name, level))
		}
	}
	for _, in := range set.Interfaces() {
		for _, f := range append(in.Argv, in.MarkerFile) {
			if f == "" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			outputs = append(outputs, f+": "+string(b))
		}
	}
	if err := set.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// A failed start: its tokens were generated but never shown.
	sick := testChild(t, "dashboard", freePort(t), envMode+"=unhealthy")
	sick.Credential, sick.TokenEnv = contract.CredentialBearer, "DEMO_TOKEN"
	failing := testSpec(t, log, sick)
	failing.StartupTimeout = time.Second
	if _, err := Start(context.Background(), failing); err == nil {
		t.Fatal("unhealthy start succeeded")
	} else {
		outputs = append(outputs, "error: "+err.Error())
	}
	outputs = append(outputs, "log: "+log.buf.String())

	all := strings.Join(outputs, "\n")
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("a token appears in the outputs")
		}
	}
	if m := anyToken.FindString(all); m != "" {
		t.Errorf("something token-shaped appears in the outputs")
	}
	if !strings.Contains(all, `"credential_file":"`) {
		t.Error("the report does not locate the credential")
	}
}
