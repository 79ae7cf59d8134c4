package console

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// TestPagesShowRecoveryAndEscape: a blocked agent's page and row carry
// its reason and recovery action; what a status holds is escaped.
func TestPagesShowRecoveryAndEscape(t *testing.T) {
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	blocked := supervisorproto.AgentStatus{Name: "coder", Sandbox: "main", State: supervisorproto.StateBlocked,
		Reason: "credential_required", Action: "run fabric deploy apply with OPENAI_API_KEY set",
		Events: []supervisorproto.Event{{Kind: "blocked", Message: `<script>alert(1)</script>`}}}
	st := supervisorproto.Status{Agents: []supervisorproto.AgentStatus{blocked}, Lost: []string{"agent coder: its previous runtime was lost"}}
	tests := []struct {
		page string
		data any
		want []string
	}{
		{"deployment", deploymentView{Status: st, Sandboxes: []sandboxView{{Name: "main", Agents: st.Agents}},
			Events: []eventView{{Resource: "agent/coder", Event: blocked.Events[0]}}},
			[]string{`data-state="blocked"`, "credential_required", "run fabric deploy apply with OPENAI_API_KEY set", "its previous runtime was lost", "&lt;script&gt;"}},
		{"agent", agentView{Status: st, Agent: blocked}, []string{"To recover: run fabric deploy apply with OPENAI_API_KEY set", `badge bad`, "&lt;script&gt;"}},
		{"access", accessView{Status: st}, []string{"The deployment runs no access gateway."}},
	}
	for _, tc := range tests {
		w := httptest.NewRecorder()
		p.render(w, httptest.NewRequest("GET", "/", nil), 200, tc.page, tc.data)
		body := w.Body.String()
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", tc.page, w.Code, body)
		}
		for _, s := range tc.want {
			if !strings.Contains(body, s) {
				t.Errorf("%s page lacks %q", tc.page, s)
			}
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("%s page does not escape status text", tc.page)
		}
	}
}
