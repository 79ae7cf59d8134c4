package batchreport

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/contract/validate"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", name, got)
	}
}

func TestSummaryGolden(t *testing.T) {
	s, err := Build(fixture())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	golden(t, "summary.json.golden", b)
	if err := validate.NewValidator().Validate("batch-summary", b); err != nil {
		t.Errorf("summary does not validate against its schema: %v", err)
	}
}

func TestPassRateChartGolden(t *testing.T) {
	s, err := Build(fixture())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "pass-rate.svg.golden", []byte(passRateChart(s)+"\n"))
}

func TestSummaryFigures(t *testing.T) {
	in := fixture()
	s, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Totals.Planned != 54 || s.Totals.Pending != 2 || s.Totals.Cancelled != 1 || s.Totals.Skipped != 1 {
		t.Errorf("totals %+v", s.Totals)
	}
	if s.CI.Method != MethodBootstrap || s.CI.Resamples != DefaultResamples || s.CI.Seed != DefaultSeed {
		t.Errorf("ci %+v", s.CI)
	}
	for _, cs := range s.Configs {
		c := cs.BatchCounts
		if c.Scored+c.Errored+c.Cancelled+c.Skipped+c.Pending != c.Planned {
			t.Errorf("%s: counts do not add up: %+v", cs.Config, c)
		}
		sum := 0
		for _, n := range cs.Errors {
			sum += n
		}
		if sum != c.Errored || cs.Retries != c.Errored {
			t.Errorf("%s: errors %v retries %d errored %d", cs.Config, cs.Errors, cs.Retries, c.Errored)
		}
		if p := cs.PassAt1; p.Strict == nil || p.Scored == nil || *p.Strict > *p.Scored || *p.CILow > *p.Strict || *p.CIHigh < *p.Strict {
			t.Errorf("%s: pass@1 %+v", cs.Config, p)
		}
	}
	// The second config has a task with only one scored trial, so pass@2
	// and pass@3 are undefined for it.
	if _, ok := s.Configs[1].PassAtK["2"]; ok {
		t.Errorf("pass@2 defined for %s: %v", s.Configs[1].Config, s.Configs[1].PassAtK)
	}
	if s.Configs[2].CostUSD.Total != nil || s.Configs[2].CostUSD.SourceCounts[contract.CostUnknown] != 18 {
		t.Errorf("unknown cost: %+v", s.Configs[2].CostUSD)
	}
	for _, p := range s.Pairs {
		if p.A == "scripted-baseline" {
			t.Errorf("baseline as a: %+v", p)
		}
		if p.Test != TestSign || p.PHolm < p.PValue {
			t.Errorf("pair %+v", p)
		}
	}
	if len(s.Pairs) != 3 {
		t.Errorf("%d pairs", len(s.Pairs))
	}
}

func TestWilsonWithOneRepeat(t *testing.T) {
	in := Input{Spec: contract.BatchSpec{Metadata: contract.BatchMetadata{Name: "k1"}, Configs: []contract.BatchConfig{{ID: "a"}, {ID: "b"}}}}
	for i, pass := range []bool{true, true, false, true, false, true, true, true} {
		for j, cfg := range []string{"a", "b"} {
			outcome := contract.TrialFailed
			if pass == (j == 0) || i == 7 {
				outcome = contract.TrialPassed
			}
			in.Trials = append(in.Trials, contract.BatchTrial{TrialID: fmt.Sprintf("t%d__%s__r01", i, cfg), Task: fmt.Sprintf("t%d", i), Config: cfg, Repeat: 1, Outcome: outcome, Attempts: 1})
		}
	}
	s, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	a := s.Configs[0].PassAt1
	// a passes 6 of 8: Wilson 95% [0.409275, 0.928521] (by hand).
	if a.Method != MethodWilson || *a.Strict != 0.75 || *a.CILow != 0.409275 || *a.CIHigh != 0.928521 {
		t.Errorf("a: %+v %v %v", a, *a.CILow, *a.CIHigh)
	}
	p := s.Pairs[0]
	// a better on 5 tasks, b on 2: McNemar p = 2 (1 + 7 + 21) / 128.
	if p.Test != TestMcNemar || p.ABetter != 5 || p.BBetter != 2 || p.PValue != round6(58.0/128) {
		t.Errorf("pair %+v", p)
	}
}

func TestBuildRejects(t *testing.T) {
	in := fixture()
	in.Trials = append(in.Trials, in.Trials[0])
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "two records") {
		t.Errorf("duplicate record: err = %v", err)
	}
	in = fixture()
	in.Spec.Report.CI = &contract.CIOptions{Method: "jackknife"}
	if _, err := Build(in); err == nil {
		t.Error("unknown CI method accepted")
	}
}

func TestWriteRerunIsByteIdentical(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := Write(a, fixture()); err != nil {
		t.Fatal(err)
	}
	in := fixture()
	slices.Reverse(in.Trials) // record order must not matter
	if err := Write(b, in); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"summary.json", "trials.csv", "tasks.csv", "index.html"} {
		x, err1 := os.ReadFile(filepath.Join(a, name))
		y, err2 := os.ReadFile(filepath.Join(b, name))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between runs (%v, %v)", name, err1, err2)
		}
	}
}

// flatten writes a decoded JSON value as path -> cell text, the way
// trials.csv documents its columns.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if prefix == "rewards" {
			b, _ := json.Marshal(x)
			out[prefix] = string(b)
			return
		}
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		b, _ := json.Marshal(x)
		out[prefix] = string(b)
	case json.Number:
		out[prefix] = x.String()
	case bool:
		out[prefix] = strconv.FormatBool(x)
	case string:
		out[prefix] = x
	}
}

// sameNumber says whether two cells are the same number, however written.
func sameNumber(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

func TestTrialsCSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := fixture()
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "trials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(in.Trials)+1 {
		t.Fatalf("%d rows for %d trials", len(rows)-1, len(in.Trials))
	}
	header := rows[0]
	byID := map[string]contract.BatchTrial{}
	for _, tr := range in.Trials {
		byID[tr.TrialID] = tr
	}
	for _, row := range rows[1:] {
		rec, ok := byID[row[0]]
		if !ok {
			t.Fatalf("row for unknown trial %q", row[0])
		}
		b, _ := json.Marshal(rec)
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		delete(m, "history")
		delete(m, "schema_version")
		want := map[string]string{}
		flatten("", m, want)
		for i, col := range header {
			w, present := want[col]
			got := row[i]
			if !present {
				// omitempty fields: absent in JSON, zero or empty in CSV.
				if got != "" && got != "0" && got != "false" {
					t.Errorf("%s %s = %q, absent from trial.json", rec.TrialID, col, got)
				}
				continue
			}
			if got != w && !sameNumber(got, w) {
				t.Errorf("%s %s = %q, trial.json has %q", rec.TrialID, col, got, w)
			}
			delete(want, col)
		}
		for col := range want {
			t.Errorf("%s: trial.json field %s has no column", rec.TrialID, col)
		}
	}
}

func TestTasksCSV(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, fixture()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "tasks.csv"))
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(rows) != 1+6*3 {
		t.Fatalf("tasks.csv: %d rows, %v", len(rows), err)
	}
}

var urlRefs = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(?:src|href|xlink:href|action|srcset|poster|data)\s*=\s*"([^"]*)"`),
	regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*'([^']*)'`),
	regexp.MustCompile(`(?i)url\(\s*['"]?([^'")]*)`),
	regexp.MustCompile(`(?i)@import\s+['"]?([^'";\s]*)`),
}

func TestIndexHasNoExternalURL(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, fixture()); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := regexp.MustCompile(`^(#[\w-]*|\.\./trials/[^:]*)$`)
	refs := 0
	for _, re := range urlRefs {
		for _, m := range re.FindAllSubmatch(page, -1) {
			refs++
			if !allowed.Match(m[1]) {
				t.Errorf("reference %q in index.html is not a fragment or a relative trial path", m[1])
			}
		}
	}
	if refs == 0 {
		t.Error("no links found: the heatmap and task table should link trial dirs")
	}
	for _, bad := range []string{"http://", "https://", "<b>html-task</b>", "<link", "@font-face"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	if !bytes.Contains(page, []byte("&lt;b&gt;html-task&lt;/b&gt;")) {
		t.Error("task name not escaped")
	}
	if n := bytes.Count(page, []byte("<svg ")); n != len(svgIDs) {
		t.Errorf("%d charts, want %d", n, len(svgIDs))
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	in := fixture()
	for _, tr := range in.Trials {
		p := filepath.Join(dir, filepath.FromSlash(tr.Paths.Dir), "trial.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tr)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in.Trials) || !slices.IsSortedFunc(got, func(a, b contract.BatchTrial) int { return strings.Compare(a.TrialID, b.TrialID) }) {
		t.Fatalf("ReadDir: %d records, sorted %v", len(got), slices.IsSortedFunc(got, func(a, b contract.BatchTrial) int { return strings.Compare(a.TrialID, b.TrialID) }))
	}
	bad := filepath.Join(dir, "trials", "x", "y", "r01", "trial.json")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte(`{"schema_version":"fabric.batch.trial/v1alpha1","trial_id":"x","surprise":1}`), 0o644)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad record: err = %v, want one naming %s", err, bad)
	}
	if recs, err := ReadDir(t.TempDir()); err != nil || len(recs) != 0 {
		t.Errorf("empty batch dir: %v, %v", recs, err)
	}
}
