//go:build linux

package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/harnesstest"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// TestLivePermission drives the permission path for real: the scripted
// model asks for a shell command the agent gates behind
// session/request_permission. deny and an unanswered ask leave the command
// unrun; allow, and an ask answered "allow" through Runtime.DecidePermission,
// run it; every decision is a permission_decision event.
func TestLivePermission(t *testing.T) {
	livetest.Short(t, "the real ACP agents from harnesses/acp and Node 24")
	for _, pc := range cases {
		if pc.bin == "qwen" { // Qwen Code runs shell commands in ACP mode without asking (see README)
			continue
		}
		t.Run(pc.bin, func(t *testing.T) {
			script := &modelstub.Script{Rules: []modelstub.Rule{
				{Match: modelstub.Match{Contains: "GATED_TOOL", Times: 1}, Reply: modelstub.Reply{ToolCall: &modelstub.ToolCall{Command: "touch gated.txt"}}},
				{Match: modelstub.Match{Contains: "GATED_TOOL"}, Reply: modelstub.Reply{Text: "done"}},
			}, Default: &modelstub.Reply{Text: "ok"}}
			for _, tc := range []struct {
				name     string
				settings map[string]any
				decide   string // answer asks through the SDK with this
				wantRun  bool
				wantSrc  string
			}{
				{"deny", map[string]any{"permission_policy": "deny"}, "", false, "policy"},
				{"ask-unanswered", map[string]any{"permission_policy": "ask", "permission_timeout_seconds": 1}, "", false, "timeout"},
				{"ask-deny", map[string]any{"permission_policy": "ask"}, "deny", false, "caller"},
				{"ask-allow", map[string]any{"permission_policy": "ask"}, "allow", true, "caller"},
				{"allow", map[string]any{"permission_policy": "allow"}, "", true, "policy"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					l := newLive(t, pc, script)
					rt := l.start(tc.settings)
					var mu sync.Mutex
					var decideErrs []error
					var wg sync.WaitGroup
					ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
					defer cancel()
					res, err := rt.Invoke(ctx, "GATED_TOOL please", fabric.WithEvents(func(e contract.FabricEvent) {
						if e.Kind != "permission_request" || tc.decide == "" {
							return
						}
						inv, _ := e.Metadata["invocation_id"].(string)
						id, _ := e.Metadata["request_id"].(string)
						wg.Go(func() {
							err := rt.DecidePermission(context.Background(), inv, id, tc.decide)
							mu.Lock()
							decideErrs = append(decideErrs, err)
							mu.Unlock()
						})
					}))
					wg.Wait()
					if err != nil {
						t.Fatal(err)
					}
					for _, err := range decideErrs {
						if err != nil {
							t.Errorf("DecidePermission: %v", err)
						}
					}
					_, statErr := os.Stat(filepath.Join(l.Workspace, "gated.txt"))
					ran := statErr == nil
					if ran != tc.wantRun {
						t.Errorf("command ran = %v, want %v; status %s; events %v", ran, tc.wantRun, res.Status, kinds(res))
					}
					decisions := harnesstest.Events(res, "permission_decision")
					if len(decisions) == 0 {
						t.Fatalf("no permission_decision event; events %v", kinds(res))
					}
					for _, d := range decisions {
						want := "deny"
						if tc.wantRun {
							want = "allow"
						}
						if d.Metadata["decision"] != want || d.Metadata["source"] != tc.wantSrc {
							t.Errorf("decision event %v, want decision %s source %s", d.Metadata, want, tc.wantSrc)
						}
					}
					if strings.HasPrefix(tc.name, "ask") && len(harnesstest.Events(res, "permission_request")) == 0 {
						t.Errorf("no permission_request event; events %v", kinds(res))
					}
				})
			}
		})
	}
}
