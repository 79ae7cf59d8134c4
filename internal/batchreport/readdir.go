package batchreport

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/fabric-runtime/fabric/contract"
)

// ReadDir reads every trials/**/trial.json under a batch directory (the
// layout is trials/<task>/<config>/rNN/trial.json), sorted by trial id.
// A record that does not decode, or has the wrong schema_version or no
// trial id, is an error naming its file.
func ReadDir(batchDir string) ([]contract.BatchTrial, error) {
	root := filepath.Join(batchDir, "trials")
	var out []contract.BatchTrial
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root && os.IsNotExist(err) {
				return fs.SkipDir // no trial has ended yet
			}
			return err
		}
		if d.IsDir() || d.Name() != "trial.json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		t, err := DecodeTrial(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("batchreport: read trials: %w", err)
	}
	slices.SortFunc(out, func(a, b contract.BatchTrial) int { return cmp.Compare(a.TrialID, b.TrialID) })
	for i := 1; i < len(out); i++ {
		if out[i].TrialID == out[i-1].TrialID {
			return nil, fmt.Errorf("batchreport: read trials: two records of trial %q", out[i].TrialID)
		}
	}
	return out, nil
}

// DecodeTrial decodes one trial.json strictly: unknown keys, trailing data,
// another schema_version, or a missing trial_id, task, config or outcome
// are errors.
func DecodeTrial(data []byte) (contract.BatchTrial, error) {
	var t contract.BatchTrial
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return t, fmt.Errorf("decode trial record: %w", err)
	}
	if dec.More() {
		return t, fmt.Errorf("decode trial record: data after the record")
	}
	if t.SchemaVersion != contract.BatchTrialSchemaVersion {
		return t, fmt.Errorf("trial record: schema_version %q, want %q", t.SchemaVersion, contract.BatchTrialSchemaVersion)
	}
	for _, f := range []struct{ name, v string }{{"trial_id", t.TrialID}, {"task", t.Task}, {"config", t.Config}, {"outcome", t.Outcome}} {
		if f.v == "" {
			return t, fmt.Errorf("trial record: no %s", f.name)
		}
	}
	switch t.Outcome {
	case contract.TrialPassed, contract.TrialFailed, contract.TrialErrored, contract.TrialCancelled, contract.TrialSkipped:
	default:
		return t, fmt.Errorf("trial record %s: unknown outcome %q", t.TrialID, t.Outcome)
	}
	return t, nil
}
