package conformance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReportUnexpected(t *testing.T) {
	items := []Item{
		{ID: "1", Name: "discovery", Verdict: Pass},
		{ID: "2", Name: "malformed-output", Verdict: Skip, Detail: "no overlay"},
		{ID: "3", Name: "invoke", Verdict: Fail, Detail: "no answer"},
	}
	for _, tc := range []struct {
		name    string
		report  Report
		mayskip []string
		want    []string
	}{
		{"clean", Report{Items: items[:1], Passed: true}, nil, nil},
		{"documented skip", Report{Items: items[:2], Passed: true}, []string{"malformed-output"}, nil},
		{"undocumented skip", Report{Items: items[:2], Passed: true}, nil, []string{"item 2 malformed-output skipped: no overlay"}},
		{"failure", Report{Items: items, Passed: false}, []string{"malformed-output"}, []string{"item 3 invoke failed: no answer", "the report did not pass"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.report.Unexpected(tc.mayskip...)); diff != "" {
				t.Errorf("Unexpected (-want +got):\n%s", diff)
			}
		})
	}
}
