package testlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func rec(action, pkg, test, output string) string {
	b, err := json.Marshal(event{Action: action, Package: pkg, Test: test, Output: output})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestRender(t *testing.T) {
	cases := []struct {
		name       string
		in         []string
		want       string
		notWant    []string
		failed     bool
		pkgs, tsts int
	}{
		{
			name: "passing package prints only its result line",
			in: []string{
				rec("start", "p", "", ""), rec("run", "p", "TestA", ""),
				rec("output", "p", "TestA", "=== RUN   TestA\n"), rec("output", "p", "TestA", "    a_test.go:9: verbose detail\n"),
				rec("output", "p", "TestA", "--- PASS: TestA (0.00s)\n"), rec("pass", "p", "TestA", ""),
				rec("output", "p", "", "PASS\n"), rec("output", "p", "", "ok  \tp\t0.1s\n"), rec("pass", "p", "", ""),
			},
			want: "ok  \tp\t0.1s\n", notWant: []string{"verbose detail", "PASS\n"}, pkgs: 1, tsts: 1,
		},
		{
			name: "a failing test's output is printed, a passing one's is not",
			in: []string{
				rec("start", "p", "", ""), rec("run", "p", "TestA", ""), rec("run", "p", "TestB", ""),
				rec("output", "p", "TestA", "    a_test.go:9: quiet\n"), rec("pass", "p", "TestA", ""),
				rec("output", "p", "TestB", "    b_test.go:3: boom\n"), rec("output", "p", "TestB", "--- FAIL: TestB (0.00s)\n"), rec("fail", "p", "TestB", ""),
				rec("output", "p", "", "FAIL\n"), rec("output", "p", "", "FAIL\tp\t0.2s\n"), rec("fail", "p", "", ""),
			},
			want: "    b_test.go:3: boom\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\tp\t0.2s\n", notWant: []string{"quiet"}, failed: true, pkgs: 1, tsts: 2,
		},
		{
			name: "a crashed binary shows the output of the test that never ended",
			in: []string{
				rec("start", "p", "", ""), rec("run", "p", "TestC", ""),
				rec("output", "p", "TestC", "panic: oops\n"),
				rec("output", "p", "", "FAIL\tp\t0.3s\n"), rec("fail", "p", "", ""),
			},
			want: "panic: oops\nFAIL\tp\t0.3s\n", failed: true, pkgs: 1, tsts: 1,
		},
		{
			name: "build output and non-JSON lines pass through",
			in:   []string{`{"ImportPath":"p","Action":"build-output","Output":"p/x.go:1: syntax error\n"}`, "# not json"},
			want: "p/x.go:1: syntax error\n# not json\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, saved strings.Builder
			in := strings.Join(c.in, "\n") + "\n"
			sum, err := Render(strings.NewReader(in), &out, &saved)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != c.want {
				t.Errorf("printed %q, want %q", out.String(), c.want)
			}
			for _, s := range c.notWant {
				if strings.Contains(out.String(), s) {
					t.Errorf("printed %q", s)
				}
			}
			if saved.String() != in {
				t.Errorf("saved copy differs from the input")
			}
			if sum.Failed() != c.failed || sum.Packages != c.pkgs || sum.Tests != c.tsts {
				t.Errorf("summary %+v, want failed=%v packages=%d tests=%d", sum, c.failed, c.pkgs, c.tsts)
			}
		})
	}
}

func TestScan(t *testing.T) {
	tok1 := strings.Repeat("ab", 32)
	tok2 := strings.Repeat("0f", 32)
	absent := strings.Repeat("cd", 32)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("ledger", tok1+"\n"+tok2+"\nnot a token\n"+tok1+"\n"+strings.ToUpper(absent)+"\n")
	l, err := ReadLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 2 {
		t.Fatalf("ledger holds %d tokens, want 2 (duplicates, junk and upper case ignored)", l.Len())
	}
	cases := []struct {
		name string
		data string
		want []Hit
	}{
		{"clean", "handle {\"port\": 1234}\n" + absent + "\n", nil},
		{"exact", "x\n\"token\":\"" + tok2 + "\"\n", []Hit{{Line: 2, Token: 2}}},
		{"inside longer hex", "0123" + tok1 + "45\n", []Hit{{Line: 1, Token: 1}}},
		{"split over lines is not a hit", tok1[:32] + "\n" + tok1[32:] + "\n", nil},
		{"two on one line", tok1 + " " + tok2, []Hit{{Line: 1, Token: 1}, {Line: 1, Token: 2}}},
		{"long line", strings.Repeat("z", 3<<20) + tok2 + "\n", []Hit{{Line: 1, Token: 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := write(filepath.Join("scan", strings.ReplaceAll(c.name, " ", "_")), c.data)
			rep, err := l.Scan(p)
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.want {
				c.want[i].Path = p
			}
			if len(rep.Hits) != len(c.want) {
				t.Fatalf("hits %v, want %v", rep.Hits, c.want)
			}
			for i := range c.want {
				if rep.Hits[i] != c.want[i] {
					t.Errorf("hit %v, want %v", rep.Hits[i], c.want[i])
				}
				if strings.Contains(rep.Hits[i].String(), tok1) || strings.Contains(rep.Hits[i].String(), tok2) {
					t.Errorf("a hit names the token value: %s", rep.Hits[i])
				}
			}
			if rep.Files != 1 || rep.Bytes != int64(len(c.data)) {
				t.Errorf("scanned %d files, %d bytes; want 1, %d", rep.Files, rep.Bytes, len(c.data))
			}
		})
	}
	// A directory is walked.
	rep, err := l.Scan(filepath.Join(dir, "scan"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != len(cases) || len(rep.Hits) != 5 {
		t.Errorf("directory scan: %d files, %d hits; want %d, 5", rep.Files, len(rep.Hits), len(cases))
	}
}

// FuzzRender: any input renders without panicking, and the saved copy
// keeps every line that was read.
func FuzzRender(f *testing.F) {
	f.Add([]byte(rec("start", "p", "", "") + "\n" + rec("output", "p", "TestA", "x\n") + "\n" + rec("fail", "p", "TestA", "") + "\n"))
	f.Add([]byte("{\"Action\":\n{}\nplain\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out, saved strings.Builder
		if _, err := Render(strings.NewReader(string(data)), &out, &saved); err != nil {
			return
		}
		lines := strings.Count(string(data), "\n")
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		if got := strings.Count(saved.String(), "\n"); got != lines {
			t.Fatalf("saved %d lines of %d", got, lines)
		}
	})
}

func FuzzLedgerFind(f *testing.F) {
	f.Add([]byte(strings.Repeat("ab", 32)), []byte("xx"+strings.Repeat("ab", 32)+"yy"))
	f.Fuzz(func(t *testing.T, ledger, data []byte) {
		l := &Ledger{index: map[string]int{}}
		for _, line := range strings.Split(string(ledger), "\n") {
			if len(line) == tokenLen && isHex([]byte(line)) {
				l.index[line] = len(l.index) + 1
			}
		}
		hits := l.find(data)
		want := 0
		for tok := range l.index {
			for i := 0; i+tokenLen <= len(data); i++ {
				if string(data[i:i+tokenLen]) == tok {
					want++
				}
			}
		}
		if len(hits) != want {
			t.Fatalf("found %d, want %d", len(hits), want)
		}
	})
}
