package runtime

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

func launchService(t *testing.T, p *contract.RunPlan, opts Options) (*ServiceHost, hostproto.ServiceStartResult) {
	t.Helper()
	sh, res, err := LaunchService(context.Background(), p, opts, ServiceLaunch{
		Method: hostproto.MethodServiceStart,
		Params: hostproto.ServiceStartParams{ServiceID: NewID("service"), ServiceType: "shared_state"},
	})
	if err != nil {
		t.Fatalf("launch service: %v", err)
	}
	t.Cleanup(func() { sh.Stop(context.Background()) })
	return sh, res
}

func environOf(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// TestServiceHostLifecycle: a service host is launched like a runtime's
// (own process group, private home), answers health, and Stop leaves
// nothing behind.
func TestServiceHostLifecycle(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	sh, res := launchService(t, testPlan(t, scriptedV2, nil), opts)
	token := res.CredentialEnv["FABRIC_SCRIPTED_SERVICE_TOKEN"]
	if url, _ := res.Connection["url"].(string); !strings.HasPrefix(url, "http://127.0.0.1:") || len(token) < 16 {
		t.Fatalf("result connection %v, token %d bytes", res.Connection, len(token))
	}
	if st, err := os.Stat(sh.Home()); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("home %v %v", st, err)
	}
	if env := environOf(t, sh.Pid()); env[hostproto.EnvServiceID] == "" || env[hostproto.EnvRuntimeID] != env[hostproto.EnvServiceID] {
		t.Fatalf("service host env ids %q %q", env[hostproto.EnvServiceID], env[hostproto.EnvRuntimeID])
	}
	for _, level := range []string{contract.LevelLive, contract.LevelActive, contract.LevelReady} {
		h, err := sh.Health(context.Background(), level)
		if err != nil || h.Outcome != contract.OutcomePassed {
			t.Fatalf("health %s: %+v %v", level, h, err)
		}
	}
	pgid, home := sh.Pid(), sh.Home()
	if err := sh.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, pgid)
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("home left: %v", err)
	}
	if err := sh.Stop(context.Background()); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

// TestServiceBoundRuntime: a runtime bound to a service carries its id,
// its host gets the credential in its environment, and the credential is
// scrubbed from the host's diagnostics.
func TestServiceBoundRuntime(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	_, res := launchService(t, testPlan(t, scriptedV2, nil), opts)
	const serviceID = "service-test"
	token := res.CredentialEnv["FABRIC_SCRIPTED_SERVICE_TOKEN"]
	bind := &ServiceBinding{
		Service: hostproto.ServiceBinding{ServiceID: serviceID, AdapterID: scriptedV2, ServiceType: "shared_state", Ownership: contract.OwnershipFabric, Connection: res.Connection},
		Env:     res.CredentialEnv,
	}
	bopts := opts
	bopts.Service = bind
	rt := startRuntime(t, testPlan(t, scriptedV2, map[string]any{"response": "{service_turn}/{turn}"}), bopts)
	if h := rt.Handle(); h.ServiceID != serviceID {
		t.Fatalf("handle service id %q", h.ServiceID)
	}
	env := environOf(t, rt.HostPid())
	if env["FABRIC_SCRIPTED_SERVICE_TOKEN"] != token || env[hostproto.EnvServiceID] != serviceID {
		t.Fatal("the runtime host did not get the service's credential and id")
	}
	for want := 1; want <= 2; want++ {
		r, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
		if err != nil || r.Output != strconv.Itoa(want)+"/"+strconv.Itoa(want) {
			t.Fatalf("invoke %d: %+v %v", want, r.Output, err)
		}
	}

	// A host that prints the credential at start has it scrubbed.
	bopts.StateDir = t.TempDir()
	_, err := Start(context.Background(), testPlan(t, scriptedV2, map[string]any{"mode": "start_failure", "stderr": "leaked " + token}), bopts)
	var re *contract.RuntimeError
	if !errors.As(err, &re) {
		t.Fatalf("start: %v", err)
	}
	diag, _ := re.Metadata["diagnostics"].(string)
	if strings.Contains(diag, token) || !strings.Contains(diag, "leaked "+contract.Redacted) {
		t.Fatalf("diagnostics not scrubbed: %q", diag)
	}
}

// TestServiceNeedsV2: the service methods exist only on protocol v2.
func TestServiceNeedsV2(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	_, _, err := LaunchService(context.Background(), testPlan(t, scriptedV1, nil), opts, ServiceLaunch{
		Method: hostproto.MethodServiceStart, Params: hostproto.ServiceStartParams{ServiceID: "service-x"},
	})
	var ke *contract.CapabilityError
	if !errors.As(err, &ke) || ke.Code != "service_protocol_unsupported" {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(opts.StateDir); len(entries) != 0 {
		t.Fatalf("left in the state dir: %v", entries)
	}
}
