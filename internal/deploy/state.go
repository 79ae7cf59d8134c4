package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rogpeppe/go-internal/renameio"
	"golang.org/x/sys/unix"
)

// Files of a deployment's state directory written by the deploy verbs
// (the supervisor keeps its own files beside them).
const (
	IntentFile = "intent.json"
	LockFile   = "deployment.lock"
	// SupervisorLog receives a process supervisor's stdout and stderr.
	SupervisorLog = "supervisor.log"
)

// IntentFormat versions intent.json; another version is refused, never
// rewritten.
const IntentFormat = "fabric.deploy.intent/v1alpha1"

// Intent is what the deploy verbs record of a deployment: which document
// they last applied, what they own, and whether an apply or destroy is
// unfinished.
type Intent struct {
	FormatVersion string `json:"format_version"`
	Name          string `json:"name"`
	UID           string `json:"uid"`
	// Digest is the document digest of the last finished apply.
	Digest string `json:"digest,omitempty"`
	// Pending is set while an apply runs; PendingDigest is its document.
	Pending       bool   `json:"pending"`
	PendingDigest string `json:"pending_digest,omitempty"`
	// Destroying is set while a destroy runs; Destroyed once it finished.
	Destroying bool `json:"destroying"`
	Destroyed  bool `json:"destroyed"`
	// Generations are the owned resources and their generations as of the
	// last finished apply.
	Generations map[string]string `json:"generations"`
	// Supervisor is the process apply started (kind process) or the socket
	// of the operator's supervisor (kind external).
	Supervisor *SupervisorRecord `json:"supervisor,omitempty"`
	// Retained lists what destroy left on purpose.
	Retained []string `json:"retained,omitempty"`
}

// SupervisorRecord identifies the supervisor.
type SupervisorRecord struct {
	Kind   string `json:"kind"`
	Socket string `json:"socket"`
	Pid    int    `json:"pid,omitempty"`
	// StartTicks is the process's start time (/proc/<pid>/stat field 22),
	// so that a reused pid is never taken for it.
	StartTicks      uint64 `json:"start_ticks,omitempty"`
	StartedAtMillis int64  `json:"started_at_millis,omitempty"`
	// RestartedOnReboot is always false for kind process: nothing starts
	// the supervisor again after a reboot but the next apply.
	RestartedOnReboot bool `json:"restarted_on_reboot"`
}

func readIntent(dir string) (*Intent, error) {
	path := filepath.Join(dir, IntentFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Code: CodeStateUnreadable, Message: fmt.Sprintf("cannot read %s: %v", path, err)}
	}
	var head struct {
		FormatVersion string `json:"format_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, &Error{Code: CodeStateUnreadable, Message: fmt.Sprintf("%s is not an intent record: %v", path, err)}
	}
	if head.FormatVersion != IntentFormat {
		return nil, &Error{Code: CodeUnsupportedStateFormat, Message: fmt.Sprintf("%s has format %q; this fabric reads %s and never rewrites another version", path, head.FormatVersion, IntentFormat)}
	}
	var in Intent
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, &Error{Code: CodeStateUnreadable, Message: fmt.Sprintf("%s: %v", path, err)}
	}
	return &in, nil
}

func writeIntent(dir string, in *Intent) error {
	in.FormatVersion = IntentFormat
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(filepath.Join(dir, IntentFile), append(b, '\n')); err != nil {
		return &Error{Code: CodeStateUnwritable, Message: fmt.Sprintf("cannot write %s: %v", filepath.Join(dir, IntentFile), err)}
	}
	return nil
}

// lockState takes the state directory's lock (deployment.lock) without
// waiting: another deploy operation in progress is refused.
func lockState(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &Error{Code: CodeStateUnwritable, Message: fmt.Sprintf("cannot create %s: %v", dir, err)}
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, &Error{Code: CodeStateUnwritable, Message: fmt.Sprintf("cannot open the lock: %v", err)}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &Error{Code: CodeStateLocked, Message: fmt.Sprintf("another fabric deploy operation holds %s", filepath.Join(dir, LockFile))}
		}
		return nil, &Error{Code: CodeStateUnwritable, Message: fmt.Sprintf("cannot lock %s: %v", filepath.Join(dir, LockFile), err)}
	}
	return func() { f.Close() }, nil
}
