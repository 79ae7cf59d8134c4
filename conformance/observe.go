package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
)

// SuiteName and SuiteVersion identify this suite in receipts and in the
// producer names of its observations.
const (
	SuiteName    = "fabric-conformance"
	SuiteVersion = "0.9.0"
)

// Producer names of the observers (what reads the world directly, never
// through the host's protocol channel) and the executor role.
const (
	ObserverProcScan   = "observer:fabric.conformance/procscan@" + SuiteVersion
	ObserverFSScan     = "observer:fabric.conformance/fsscan@" + SuiteVersion
	ObserverSecretScan = "observer:fabric.conformance/secretscan@" + SuiteVersion
	executorRole       = "executor:fabric-host"
)

// Observation methods.
const (
	MethodProcTable  = "proc-table"
	MethodProcAndFS  = "proc-table+filesystem"
	MethodSecretScan = "document-scan"
	MethodFilesystem = "filesystem"
)

// Claim is what the executor (the adapter host, through Fabric's protocol
// channel) said about an item's postcondition: a stop result's status, a
// result's error code.
type Claim struct {
	// By names the executor: executor:fabric-host@sha256:<digest of the
	// host's binary>, read from the running host's /proc/<pid>/exe.
	By        string `json:"by"`
	Statement string `json:"statement"`
}

// Observation is what the suite saw itself of an item's postcondition:
// the process table, the state directory, the documents it collected.
type Observation struct {
	// By names the observer: observer:fabric.conformance/<name>@<version>.
	By     string `json:"by"`
	Method string `json:"method"`
	Result string `json:"result"`
	// Agrees is true when the postcondition holds; an item whose
	// observation disagrees fails, whatever the executor claimed.
	Agrees bool `json:"agrees"`
}

// Observable reports whether the item with this id has an observable
// postcondition (and so records an Observation when it runs): the items
// contract.ObservedResult names, helper operations aside (they are not the
// suite's).
func Observable(id string) bool {
	return !strings.HasPrefix(id, contract.OperationResultPrefix) && contract.ObservedResult(id)
}

// digests caches the sha256 of host binaries by path.
type digests struct {
	mu  sync.Mutex
	sum map[string]string
}

// executor names the process pid's binary as the executor of a claim.
func (d *digests) executor(pid int) string {
	path, err := hostExe(pid)
	if err != nil {
		return executorRole
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.sum[path]; ok {
		return s
	}
	id := executorRole
	if sum, err := FileSHA256(path); err == nil {
		id = executorRole + "@sha256:" + sum
	}
	if d.sum == nil {
		d.sum = map[string]string{}
	}
	d.sum[path] = id
	return id
}

// FileSHA256 is the hex sha256 of a file's bytes: how the suite names a
// host's binary, and receipts name binaries and profiles.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// executorOf names the executor of a running host (before it stops: its
// binary is read through /proc).
func (t *itemT) executorOf(pid int) string { return t.s.digests.executor(pid) }

// claim records what an executor said.
func (t *itemT) claim(by string, format string, args ...any) {
	t.claimed = &Claim{By: by, Statement: fmt.Sprintf(format, args...)}
}

// observe records what an observer saw.
func (t *itemT) observe(by, method string, agrees bool, format string, args ...any) {
	t.observed = &Observation{By: by, Method: method, Result: fmt.Sprintf(format, args...), Agrees: agrees}
}

// observeStopped is the observer of a stopped runtime: it reads the
// process table (no live member of the host's process group pgid, no live
// process whose environment names stateDir) and the state directory
// (home, when given, removed; nothing left), records what it saw and
// returns the first violation. Processes get goneTimeout to disappear:
// the group's, and as much the ones outside it, such as a harness in its
// own group that its parent-death signal kills only once the host is
// gone.
func (t *itemT) observeStopped(ctx context.Context, pgid int, stateDir, home string) error {
	var group, mention []int
	if procChecks {
		deadline := time.Now().Add(goneTimeout)
		for {
			group, mention = groupMembers(pgid), processesMentioning(stateDir)
			if len(group)+len(mention) == 0 || !time.Now().Before(deadline) || ctx.Err() != nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	homeLeft := false
	if home != "" {
		_, err := os.Stat(home)
		homeLeft = !errors.Is(err, os.ErrNotExist)
	}
	entries := dirEntries(stateDir)
	var errs []string
	if len(group) > 0 {
		errs = append(errs, fmt.Sprintf("processes %v of group %d are still running", group, pgid))
	}
	if len(mention) > 0 {
		errs = append(errs, fmt.Sprintf("processes %v of the runtime are still running", mention))
	}
	if homeLeft {
		errs = append(errs, fmt.Sprintf("the runtime home %s was not removed", home))
	}
	if len(entries) > 0 {
		errs = append(errs, fmt.Sprintf("the state directory still holds %v", entries))
	}
	return t.observeScan(errs, "after stop, ",
		fmt.Sprintf("no live process in group %d or naming the state directory; state directory empty", pgid),
		"state directory empty (no process table here)")
}

// observeScan records a process-table and filesystem observation: the
// violations found (errs), else what was seen (ok, or okNoProc where there
// is no process table), and returns the first violation with prefix.
func (t *itemT) observeScan(errs []string, prefix, ok, okNoProc string) error {
	by, method, seen := ObserverProcScan, MethodProcAndFS, ok
	if !procChecks {
		by, method, seen = ObserverFSScan, MethodFilesystem, okNoProc
	}
	if len(errs) > 0 {
		seen = strings.Join(errs, "; ")
	}
	t.observe(by, method, len(errs) == 0, "%s", seen)
	if len(errs) > 0 {
		return errors.New(prefix + errs[0])
	}
	return nil
}
