package runtimetaint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// Suffix names the record beside a runtime home.
const Suffix = ".taint.jsonl"

// MaxViolations bounds the violations one taint lists.
const MaxViolations = 20

// maxRecord bounds what Read reads of a record.
const maxRecord = 1 << 20

// Path is the taint record of the runtime home home.
func Path(home string) string { return filepath.Clean(home) + Suffix }

// Record appends t to home's record (created 0600), in one write.
func Record(home string, t contract.RuntimeTaint) error {
	if len(t.Violations) > MaxViolations {
		t.Violations, t.Truncated = t.Violations[:MaxViolations], true
	}
	line, err := json.Marshal(t)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(Path(home), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("runtimetaint: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("runtimetaint: %w", err)
	}
	return f.Close()
}

// Read returns home's taints. A record that exists is a taint even when
// a line of it cannot be read (it then counts as a taint of an unknown
// operation): the mark fails closed.
func Read(home string) (tainted bool, taints []contract.RuntimeTaint, err error) {
	f, err := os.Open(Path(home))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil, nil
	}
	if err != nil {
		return true, []contract.RuntimeTaint{{Operation: "?"}}, fmt.Errorf("runtimetaint: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), maxRecord)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var t contract.RuntimeTaint
		if json.Unmarshal(line, &t) != nil || t.Operation == "" {
			t = contract.RuntimeTaint{Operation: "?"}
		}
		taints = append(taints, t)
	}
	if err := sc.Err(); err != nil {
		taints = append(taints, contract.RuntimeTaint{Operation: "?"})
	}
	if len(taints) == 0 {
		// An empty record: someone began to mark the runtime.
		taints = []contract.RuntimeTaint{{Operation: "?"}}
	}
	return true, taints, nil
}

// FindHome is the home of runtime id under stateDir: the one directory
// named <id>-<suffix> there (runtime.Start makes it).
func FindHome(stateDir, id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\*?[]`) || id == "." || id == ".." {
		return "", fmt.Errorf("%q is not a runtime id", id)
	}
	matches, err := filepath.Glob(filepath.Join(stateDir, id+"-*"))
	if err != nil {
		return "", err
	}
	var homes []string
	for _, m := range matches {
		if st, err := os.Lstat(m); err == nil && st.IsDir() {
			homes = append(homes, m)
		}
	}
	switch len(homes) {
	case 0:
		return "", fmt.Errorf("no runtime %s under %s (stopped, or started with another state directory)", id, stateDir)
	case 1:
		return homes[0], nil
	default:
		return "", fmt.Errorf("runtime %s has %d homes under %s: %s", id, len(homes), stateDir, strings.Join(homes, ", "))
	}
}
