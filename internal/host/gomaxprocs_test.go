package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

func TestGoHostEnv(t *testing.T) {
	bundled := hostproto.EnvBundledAdapter + "=fabric.scripted"
	one := []string{"GOMAXPROCS=1", hostproto.EnvGoMaxProcs + "=1"}
	for _, tc := range []struct {
		name     string
		env, add []string
	}{
		{"a bundled Go host runs on one P", []string{"HOME=/h", bundled}, one},
		{"GOMAXPROCS the core was given is kept", []string{bundled, "GOMAXPROCS=4"}, nil},
		{"an empty GOMAXPROCS counts as given", []string{"GOMAXPROCS=", bundled}, nil},
		{"not twice", append([]string{bundled}, one...), nil},
		{"any other host is left alone", []string{"HOME=/h"}, nil},
		{"a variable that only starts like it is not it", []string{"GOMAXPROCSX=2", bundled}, one},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.env)
			got := goHostEnv(in)
			if want := append(slices.Clone(tc.env), tc.add...); !slices.Equal(got, want) {
				t.Fatalf("goHostEnv(%q) = %q, want %q", tc.env, got, want)
			}
			if !slices.Equal(in, tc.env) {
				t.Fatalf("goHostEnv changed its argument: %q", in)
			}
		})
	}
	// Appending must not write into spare capacity the caller still owns.
	env := make([]string, 1, 4)
	env[0] = bundled
	_ = goHostEnv(env)
	if extra := env[:2][1]; extra != "" {
		t.Fatalf("goHostEnv wrote %q into the caller's array", extra)
	}
}

// envReportAdapter makes the test binary a kit host (TestMain) whose turn
// answers "<its GOMAXPROCS> <what a child it starts sees>".
const envReportAdapter = "fabric.test-env-report"

type reportSession struct{}

func (reportSession) Invoke(ctx context.Context, _ adapterkit.Invocation) (contract.AgentRunResult, error) {
	out, err := exec.CommandContext(ctx, "sh", "-c", `echo "GOMAXPROCS=${GOMAXPROCS-unset} marker=${`+hostproto.EnvGoMaxProcs+`-unset}"`).Output()
	if err != nil {
		return contract.AgentRunResult{}, err
	}
	return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: strconv.Itoa(runtime.GOMAXPROCS(0)) + " " + strings.TrimSpace(string(out))}, nil
}

func (reportSession) Health(context.Context, string) (adapterkit.Health, error) {
	return adapterkit.Health{}, errors.ErrUnsupported
}

func (reportSession) Stop(context.Context) error { return nil }

func reportHost() int {
	a := adapterkit.AdapterFunc(func(context.Context, adapterkit.StartInput) (adapterkit.Session, error) { return reportSession{}, nil })
	if err := adapterkit.Serve(context.Background(), a); err != nil {
		return 1
	}
	return 0
}

// A bundled Go host runs on one P unless the core was given GOMAXPROCS,
// and what it starts sees the environment the core was given.
func TestBundledHostOneP(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Log("one CPU: a host runs on one P whatever the core sets; checking the children's environment only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMAXPROCS=") {
			base = append(base, kv)
		}
	}
	base = append(base, hostproto.EnvBundledAdapter+"="+envReportAdapter)
	for _, tc := range []struct {
		name, protocol string
		env            []string
		procs          int // 0: not checked
		child          string
	}{
		{"v2, nothing given", contract.HostProtocolV2, nil, 1, "GOMAXPROCS=unset marker=unset"},
		{"v1, nothing given", contract.HostProtocolV1, nil, 1, "GOMAXPROCS=unset marker=unset"},
		{"v2, GOMAXPROCS given", contract.HostProtocolV2, []string{"GOMAXPROCS=2"}, 2, "GOMAXPROCS=2 marker=unset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(slices.Clone(base), tc.env...)
			env = append(env, hostproto.EnvProtocol+"="+tc.protocol)
			h, err := Launch(context.Background(), Spec{Path: exe, Env: env, Protocol: tc.protocol, Home: t.TempDir(), ExitGrace: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Terminate(context.Background()) })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rc := contract.RuntimeContext{RuntimeID: "runtime-1", InvocationID: "invocation-start"}
			if _, err := h.Start(ctx, hostproto.StartParams{AgentName: "a", BaseDir: t.TempDir(), RuntimeContext: rc}); err != nil {
				t.Fatalf("start: %v (%s)", err, h.Diagnostics())
			}
			rc.InvocationID = "invocation-1"
			res, err := h.Invoke(ctx, hostproto.InvokeParams{RuntimeContext: rc, Request: contract.AgentRunRequest{Input: "go"}}, nil)
			if err != nil {
				t.Fatalf("invoke: %v (%s)", err, h.Diagnostics())
			}
			procs, child, _ := strings.Cut(res.Output.(string), " ")
			if child != tc.child {
				t.Errorf("a child of the host sees %q, want %q", child, tc.child)
			}
			if want := strconv.Itoa(tc.procs); runtime.NumCPU() >= 2 && procs != want {
				t.Errorf("the host runs with GOMAXPROCS %s, want %s", procs, want)
			}
		})
	}
}
