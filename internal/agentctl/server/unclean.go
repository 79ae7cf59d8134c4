package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric/internal/agentctl"
)

// JournalFile lists, beside the socket, the runtimes a serve owns and the
// stops it could not confirm. A clean shutdown removes it, so finding it at
// startup means the previous serve ended without cleaning up.
const JournalFile = "agent-ctl.journal"

// JournalSchemaVersion is the version of the journal (a Marker document).
const JournalSchemaVersion = "fabric.agent-ctl.journal/v1alpha1"

// journalRunning is the what of a journal entry for a runtime that is
// simply owned.
const journalRunning = "running"

// confirmWait bounds the wait for a SIGKILLed leftover group to disappear.
const confirmWait = 2 * time.Second

// writeFileAtomic writes data to path through a 0600 temporary file in the
// same directory and a rename, so readers see the old or the new file,
// never a part. sync adds an fsync of the file before the rename.
func writeFileAtomic(path string, data []byte, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// readMarkerFile reads a marker or journal. A file that is not owned by
// this user or is writable by others is not trusted (it could make serve
// signal processes): it is reported as an error and left alone.
func readMarkerFile(path, schema string) (*agentctl.Marker, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%s belongs to uid %d, not this serve's: not trusted", path, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s is writable by others (mode %v): not trusted", path, fi.Mode().Perm())
	}
	if fi.Size() > 16<<20 {
		return nil, fmt.Errorf("%s is larger than 16 MiB", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m agentctl.Marker
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", path, err)
	}
	if m.SchemaVersion != schema {
		return nil, fmt.Errorf("%s has schema_version %q, want %q", path, m.SchemaVersion, schema)
	}
	return &m, nil
}

func (s *Server) newMarker(schema string, rts []agentctl.UncleanRuntime) *agentctl.Marker {
	now := time.Now().UTC()
	if rts == nil {
		rts = []agentctl.UncleanRuntime{}
	}
	return &agentctl.Marker{
		SchemaVersion: schema, WrittenAt: now.Format(time.RFC3339Nano), WrittenAtMillis: now.UnixMilli(),
		ServePid: os.Getpid(), Socket: s.socket, BootID: s.boot, Runtimes: rts,
	}
}

// uncleanState is what serve knows of unconfirmed cleanups. It is guarded
// by Server.mu.
type uncleanState struct {
	found    *agentctl.Marker // the previous serve's record, as read at startup
	foundErr string           // a marker that could not be read or trusted
	entries  []*agentctl.UncleanEntry
	boots    map[string]string // runtime id -> boot id recorded with it
	// markerRemoved is set once the previous serve's entries are all
	// confirmed and its marker file is gone.
	markerRemoved bool
	clearedAt     time.Time // when the last pending entry was confirmed
}

func (u *uncleanState) pending() []*agentctl.UncleanEntry {
	var out []*agentctl.UncleanEntry
	for _, e := range u.entries {
		if !e.Confirmed {
			out = append(out, e)
		}
	}
	return out
}

// loadUnclean reads the marker and the journal a previous serve left,
// merges the journal into the marker (a journal means that serve ended
// without cleanup), then tries to confirm each entry, killing leftover
// process groups of this user. The marker is removed once every entry is
// confirmed.
func (s *Server) loadUnclean() {
	u := &s.unclean
	u.boots = make(map[string]string)
	var found []agentctl.UncleanRuntime
	var header *agentctl.Marker
	if m, err := readMarkerFile(s.markerPath, agentctl.MarkerSchemaVersion); err == nil {
		header = m
		for _, r := range m.Runtimes {
			found = append(found, r)
			u.boots[r.RuntimeID] = m.BootID
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		u.foundErr = err.Error()
		s.log.Warn("unclean marker not used", "path", s.markerPath, "error", err)
	}
	journalRead := false
	if j, err := readMarkerFile(s.journalPath, JournalSchemaVersion); err == nil {
		journalRead = true
		for _, r := range j.Runtimes {
			if r.What == journalRunning {
				r.What = agentctl.UncleanServeExited
				r.Detail = fmt.Sprintf("serve pid %d ended while it owned this runtime, without stopping it", j.ServePid)
				r.RecordedAtMillis = time.Now().UnixMilli()
			}
			if !containsRuntime(found, r.RuntimeID) {
				found = append(found, r)
				u.boots[r.RuntimeID] = j.BootID
			}
		}
		if header == nil {
			header = j
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		if u.foundErr == "" {
			u.foundErr = err.Error()
		}
		s.log.Warn("runtime journal not used", "path", s.journalPath, "error", err)
	}
	if len(found) == 0 {
		if journalRead {
			os.Remove(s.journalPath)
		}
		if header != nil { // an empty marker: nothing to confirm
			os.Remove(s.markerPath)
		}
		return
	}
	m := *header
	m.SchemaVersion = agentctl.MarkerSchemaVersion
	m.Runtimes = found
	u.found = &m
	for _, r := range found {
		u.entries = append(u.entries, &agentctl.UncleanEntry{UncleanRuntime: r, Origin: agentctl.OriginPrevious})
	}
	// Keep the merged record in the marker before the journal goes away,
	// so that it survives this serve dying during confirmation.
	if journalRead {
		if err := s.writeMarker(found); err != nil {
			s.log.Error("cannot write the unclean marker", "path", s.markerPath, "error", err)
		} else {
			os.Remove(s.journalPath)
		}
	}
	s.log.Warn("a previous serve left runtimes whose cleanup was not confirmed", "marker", s.markerPath, "runtimes", len(found))
	s.confirmUnclean(true, true)
}

func containsRuntime(rs []agentctl.UncleanRuntime, id string) bool {
	for _, r := range rs {
		if r.RuntimeID == id {
			return true
		}
	}
	return false
}

// writeMarker writes fabric.unclean with rts, or removes it when empty.
func (s *Server) writeMarker(rts []agentctl.UncleanRuntime) error {
	if len(rts) == 0 {
		err := os.Remove(s.markerPath)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	b, err := json.MarshalIndent(s.newMarker(agentctl.MarkerSchemaVersion, rts), "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.markerPath, append(b, '\n'), true)
}

// confirmUnclean tries to confirm every pending entry; with kill, live
// members of a recorded group are killed first. It takes s.mu only to read
// and update entries, never while it waits. When the previous serve's
// entries are all confirmed the marker is removed. Without wait it returns
// at once when another pass is running.
func (s *Server) confirmUnclean(kill, wait bool) {
	if wait {
		s.confirmMu.Lock()
	} else if !s.confirmMu.TryLock() {
		return
	}
	defer s.confirmMu.Unlock()
	s.mu.Lock()
	pending := s.unclean.pending()
	entries := make([]agentctl.UncleanEntry, len(pending))
	boots := make([]string, len(pending))
	for i, e := range pending {
		entries[i] = *e
		boots[i] = s.unclean.boots[e.RuntimeID]
	}
	s.mu.Unlock()
	if len(entries) == 0 {
		return
	}
	type result struct {
		how string
		err error
	}
	results := make([]result, len(entries))
	for i, e := range entries {
		how, err := confirmGone(e.HostPid, e.HostStartTicks, boots[i], kill, confirmWait)
		results[i] = result{how, err}
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range pending {
		if results[i].err != nil {
			e.Confirmation = results[i].err.Error()
			continue
		}
		e.Confirmed, e.Confirmation, e.ConfirmedAtMillis = true, results[i].how, now.UnixMilli()
		s.log.Info("cleanup confirmed", "runtime_id", e.RuntimeID, "host_pid", e.HostPid, "how", e.Confirmation, "origin", e.Origin)
	}
	u := &s.unclean
	if u.found != nil && !u.markerRemoved {
		left := false
		for _, e := range u.entries {
			left = left || (e.Origin == agentctl.OriginPrevious && !e.Confirmed)
		}
		if !left {
			if err := s.writeMarker(nil); err != nil {
				s.log.Error("cannot remove the unclean marker", "path", s.markerPath, "error", err)
			} else {
				u.markerRemoved = true
				s.log.Info("unclean marker cleared: every recorded runtime is confirmed gone", "marker", s.markerPath)
			}
		}
	}
	if len(u.pending()) == 0 && u.clearedAt.IsZero() {
		u.clearedAt = now
	}
}

// uncleanStatusLocked is the status view of unconfirmed cleanups, or nil
// when there never were any. Called with s.mu held.
func (s *Server) uncleanStatusLocked() *agentctl.UncleanStatus {
	u := &s.unclean
	if len(u.entries) == 0 && u.foundErr == "" {
		return nil
	}
	st := &agentctl.UncleanStatus{Marker: s.markerPath, Found: u.found, Runtimes: []agentctl.UncleanEntry{}}
	for _, e := range u.entries {
		st.Runtimes = append(st.Runtimes, *e)
	}
	st.Cleared = len(u.pending()) == 0 && u.foundErr == "" && (u.found == nil || u.markerRemoved)
	if st.Cleared && !u.clearedAt.IsZero() {
		st.ClearedAtMillis = u.clearedAt.UnixMilli()
	}
	return st
}

// writeJournal records the runtimes serve owns and the stops it could not
// confirm; with none it removes the journal. Writes are serialized and
// each writes the state at that moment.
func (s *Server) writeJournal() {
	s.journalMu.Lock()
	defer s.journalMu.Unlock()
	if s.closed {
		return
	}
	s.mu.Lock()
	var rts []agentctl.UncleanRuntime
	for _, e := range s.runtimes {
		rts = append(rts, agentctl.UncleanRuntime{
			RuntimeID: e.id, Agent: e.agent, HostPid: e.hostPid, HostStartTicks: e.hostStart,
			What: journalRunning, RecordedAtMillis: e.started.UnixMilli(),
		})
	}
	for _, e := range s.unclean.entries {
		if e.Origin == agentctl.OriginThis && !e.Confirmed {
			rts = append(rts, e.UncleanRuntime)
		}
	}
	s.mu.Unlock()
	if len(rts) == 0 {
		if err := os.Remove(s.journalPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Error("cannot remove the runtime journal", "path", s.journalPath, "error", err)
		}
		return
	}
	b, err := json.Marshal(s.newMarker(JournalSchemaVersion, rts))
	if err == nil {
		// No fsync: the journal guards against serve dying, not the machine
		// (a reboot ends every host anyway).
		err = writeFileAtomic(s.journalPath, append(b, '\n'), false)
	}
	if err != nil {
		s.log.Error("cannot write the runtime journal", "path", s.journalPath, "error", err)
	}
}
