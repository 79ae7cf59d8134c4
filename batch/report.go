package batch

import (
	"context"
	"path/filepath"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/batchreport"
)

// Report writes report/ (index.html, summary.json, trials.csv, tasks.csv)
// from the records of the planned trials and returns the summary; planned
// trials without a record count as pending.
func (r *Runner) Report(_ context.Context) (*contract.BatchSummary, error) {
	recs, err := r.Records()
	if err != nil {
		return nil, err
	}
	in := batchreport.Input{Spec: r.spec.Spec, SpecDigest: r.spec.Digest, FabricVersion: FabricVersion(), Trials: recs}
	for _, t := range r.trials {
		in.Planned = append(in.Planned, batchreport.PlannedTrial{ID: t.ID, Task: t.Task, Config: t.Config, Repeat: t.Repeat})
	}
	return writeReport(r.dir, in)
}

func writeReport(dir string, in batchreport.Input) (*contract.BatchSummary, error) {
	if err := batchreport.Write(filepath.Join(dir, "report"), in); err != nil {
		return nil, err
	}
	return batchreport.Build(in)
}

// WriteReport writes the report of a batch directory from its lock.json,
// its copy of the spec and its records, without loading any config: it
// works while the batch runs, and on a copy of the directory.
func WriteReport(dir string) (*contract.BatchSummary, error) {
	lock, in, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	_ = lock
	return writeReport(dir, in)
}

// readDir reads what a report needs from a batch directory.
func readDir(dir string) (*Lock, batchreport.Input, error) {
	lock, err := ReadLock(dir)
	if err != nil {
		return nil, batchreport.Input{}, err
	}
	spec, err := readSpecCopy(dir, lock)
	if err != nil {
		return nil, batchreport.Input{}, err
	}
	recs, err := batchreport.ReadDir(dir)
	if err != nil {
		return nil, batchreport.Input{}, err
	}
	planned := map[string]bool{}
	in := batchreport.Input{Spec: spec.Spec, SpecDigest: lock.SpecDigest, FabricVersion: lock.FabricVersion}
	for _, t := range lock.Trials {
		planned[t.ID] = true
		in.Planned = append(in.Planned, batchreport.PlannedTrial{ID: t.ID, Task: t.Task, Config: t.Config, Repeat: t.Repeat})
	}
	for _, rec := range recs {
		if planned[rec.TrialID] {
			in.Trials = append(in.Trials, rec)
		}
	}
	return lock, in, nil
}

// readSpecCopy parses the spec copy the runner keeps in the directory
// (batch.yaml or batch.json) with the original spec's directory as its
// base, without resolving tasks again.
func readSpecCopy(dir string, lock *Lock) (*Spec, error) {
	for _, name := range []string{"batch" + filepath.Ext(lock.Spec), "batch.yaml", "batch.json"} {
		p := filepath.Join(dir, name)
		if !exists(p) {
			continue
		}
		data, err := readFile(p)
		if err != nil {
			return nil, err
		}
		return parseOnly(data, p, filepath.Dir(lock.Spec))
	}
	return nil, &RunError{Code: CodeNotABatch, Message: dir + " has no copy of its spec (batch.yaml)"}
}

// Status is what a batch directory holds now.
type Status struct {
	Batch    string         `json:"batch"`
	Planned  int            `json:"planned"`
	Done     int            `json:"done"`
	Pending  int            `json:"pending"`
	Outcomes map[string]int `json:"outcomes"`
}

// ReadStatus counts a batch directory's trials by outcome.
func ReadStatus(dir string) (*Status, error) {
	lock, in, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	st := &Status{Batch: lock.Batch, Planned: len(lock.Trials), Outcomes: map[string]int{}}
	for _, rec := range in.Trials {
		st.Outcomes[rec.Outcome]++
		st.Done++
	}
	st.Pending = st.Planned - st.Done
	return st, nil
}
