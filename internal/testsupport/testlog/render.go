package testlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// event is one record of `go test -json` (cmd/test2json).
type event struct {
	Action     string `json:"Action"`
	Package    string `json:"Package"`
	ImportPath string `json:"ImportPath"`
	Test       string `json:"Test"`
	Output     string `json:"Output"`
}

// Summary counts what a rendered run did.
type Summary struct {
	Packages, FailedPackages int
	Tests, FailedTests       int
}

// Failed reports whether any package or test failed.
func (s Summary) Failed() bool { return s.FailedPackages > 0 || s.FailedTests > 0 }

// maxLine bounds one JSON record; longer lines are passed through to the
// saved copy and printed as they are.
const maxLine = 64 << 20

// Render reads `go test -json` records from r, copies every line to save
// (when not nil), and writes to w what plain `go test` would print: build
// output, each package's result line, and the whole output of every test
// that failed (or of a package whose binary failed before its tests
// finished). Lines that are not JSON records are printed as they are.
func Render(r io.Reader, w, save io.Writer) (Summary, error) {
	var sum Summary
	pending := map[string]*strings.Builder{} // package + "\x00" + test
	key := func(e *event) string { return e.Package + "\x00" + e.Test }
	flushPackage := func(pkg string) {
		for _, k := range slices.Sorted(maps.Keys(pending)) {
			if strings.HasPrefix(k, pkg+"\x00") {
				io.WriteString(w, pending[k].String())
				delete(pending, k)
			}
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := sc.Bytes()
		if save != nil {
			if _, err := save.Write(append(line, '\n')); err != nil {
				return sum, fmt.Errorf("save test log: %w", err)
			}
		}
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		switch {
		case e.Action == "build-output":
			io.WriteString(w, e.Output)
		case e.Test == "" && e.Action == "output":
			if strings.HasPrefix(e.Output, "FAIL") { // the package failed: show its unfinished tests first
				flushPackage(e.Package)
			}
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				io.WriteString(w, e.Output)
			}
		case e.Test == "" && e.Action == "start":
			sum.Packages++
		case e.Test == "" && e.Action == "fail":
			sum.FailedPackages++
			flushPackage(e.Package)
		case e.Test == "" && e.Action == "pass":
			flushPackage(e.Package) // nothing is left unless a test never ended
		case e.Action == "run":
			sum.Tests++
		case e.Action == "output":
			b := pending[key(&e)]
			if b == nil {
				b = &strings.Builder{}
				pending[key(&e)] = b
			}
			b.WriteString(e.Output)
		case e.Action == "fail":
			sum.FailedTests++
			if b := pending[key(&e)]; b != nil {
				io.WriteString(w, b.String())
			}
			delete(pending, key(&e))
		case e.Action == "pass" || e.Action == "skip":
			delete(pending, key(&e))
		}
	}
	if err := sc.Err(); err != nil {
		return sum, fmt.Errorf("read test log: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(pending)) { // a run cut short: show what never ended
		io.WriteString(w, pending[k].String())
	}
	return sum, nil
}
