package hostproto

import (
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestCheckRunResult(t *testing.T) {
	errInfo := func(code, msg string) *contract.AgentRunError {
		return &contract.AgentRunError{Code: code, Message: msg}
	}
	art := func(name, kind, path string) contract.AgentArtifact {
		return contract.AgentArtifact{Name: name, Kind: kind, Path: path}
	}
	blankType := " \t"
	for _, tc := range []struct {
		name string
		r    contract.AgentRunResult
		ok   bool
	}{
		{"succeeded", contract.AgentRunResult{Status: contract.StatusSucceeded}, true},
		{"failed with an error", contract.AgentRunResult{Status: contract.StatusFailed, Error: errInfo("boom", "it broke")}, true},
		{"cancelled", contract.AgentRunResult{Status: contract.StatusCancelled}, true},
		{"cancelled with an error", contract.AgentRunResult{Status: contract.StatusCancelled, Error: errInfo("stopped", "the user stopped it")}, true},
		{"artifacts", contract.AgentRunResult{Status: contract.StatusSucceeded, Artifacts: []contract.AgentArtifact{art("t", "log", "a/t.jsonl")}}, true},
		{"an escaping path is not this rule's", contract.AgentRunResult{Status: contract.StatusSucceeded, Artifacts: []contract.AgentArtifact{art("t", "log", "../t")}}, true},

		{"no status", contract.AgentRunResult{}, false},
		{"unknown status", contract.AgentRunResult{Status: "done"}, false},
		{"succeeded with an error", contract.AgentRunResult{Status: contract.StatusSucceeded, Error: errInfo("boom", "it broke")}, false},
		{"failed without an error", contract.AgentRunResult{Status: contract.StatusFailed}, false},
		{"blank error code", contract.AgentRunResult{Status: contract.StatusFailed, Error: errInfo(" ", "it broke")}, false},
		{"blank error message", contract.AgentRunResult{Status: contract.StatusFailed, Error: errInfo("boom", "")}, false},
		{"blank artifact name", contract.AgentRunResult{Status: contract.StatusSucceeded, Artifacts: []contract.AgentArtifact{art("", "log", "t")}}, false},
		{"blank artifact kind", contract.AgentRunResult{Status: contract.StatusSucceeded, Artifacts: []contract.AgentArtifact{art("t", "\n", "t")}}, false},
		{"blank artifact path", contract.AgentRunResult{Status: contract.StatusSucceeded, Artifacts: []contract.AgentArtifact{art("t", "log", "")}}, false},
		{"blank media type", contract.AgentRunResult{Status: contract.StatusSucceeded, Artifacts: []contract.AgentArtifact{{Name: "t", Kind: "log", Path: "t", MediaType: &blankType}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckRunResult(&tc.r); (err == nil) != tc.ok {
				t.Errorf("CheckRunResult = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestArtifactPathOK(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"t.jsonl", true},
		{"a/b/t.jsonl", true},
		{`a\b\t.jsonl`, true},
		{"./t", true},
		{"a/./b", true},
		{"..a/b..", true},
		{"a/...", true},

		{"", false},
		{"/etc/passwd", false},
		{`\share\x`, false},
		{"C:/x", false},
		{`c:\x`, false},
		{"..", false},
		{"../t", false},
		{"a/../../t", false},
		{"a/../t", false}, // stays inside, but no ".." segment is the rule
		{`a\..\t`, false},
		{"a//../t", false},
	} {
		if got := ArtifactPathOK(tc.path); got != tc.ok {
			t.Errorf("ArtifactPathOK(%q) = %v, want %v", tc.path, got, tc.ok)
		}
	}
	r := contract.AgentRunResult{Artifacts: []contract.AgentArtifact{{Path: "ok"}, {Path: "../no"}}}
	if CheckArtifactPaths(&r) == nil {
		t.Error("CheckArtifactPaths passed an escaping path")
	}
	r.Artifacts = r.Artifacts[:1]
	if err := CheckArtifactPaths(&r); err != nil {
		t.Errorf("CheckArtifactPaths = %v", err)
	}
}
