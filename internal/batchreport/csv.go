package batchreport

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
)

// trialColumn is one column of trials.csv: its name is the field's path in
// trial.json (dotted for nested objects).
type trialColumn struct {
	name string
	get  func(t *contract.BatchTrial) string
}

func itoa(v int64) string   { return strconv.FormatInt(v, 10) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
func optf(v *float64) string {
	if v == nil {
		return ""
	}
	return ftoa(*v)
}

// jsonCell writes a list or map as compact JSON (keys sorted), "" when
// empty.
func jsonCell[T any](v []T, m map[string]float64) string {
	var b []byte
	switch {
	case len(v) > 0:
		b, _ = json.Marshal(v)
	case len(m) > 0:
		b, _ = json.Marshal(m)
	default:
		return ""
	}
	return string(b)
}

func errField(f func(e *contract.TrialError) string) func(t *contract.BatchTrial) string {
	return func(t *contract.BatchTrial) string {
		if t.Error == nil {
			return ""
		}
		return f(t.Error)
	}
}

func usageField(f func(u *contract.TrialUsage) int64) func(t *contract.BatchTrial) string {
	return func(t *contract.BatchTrial) string {
		if t.Usage == nil {
			return ""
		}
		return itoa(f(t.Usage))
	}
}

// trialColumns are trials.csv's columns, in order (docs/batch-report.md
// lists them). history and schema_version stay in trial.json only.
var trialColumns = []trialColumn{
	{"trial_id", func(t *contract.BatchTrial) string { return t.TrialID }},
	{"batch", func(t *contract.BatchTrial) string { return t.Batch }},
	{"task", func(t *contract.BatchTrial) string { return t.Task }},
	{"config", func(t *contract.BatchTrial) string { return t.Config }},
	{"repeat", func(t *contract.BatchTrial) string { return itoa(int64(t.Repeat)) }},
	{"digest", func(t *contract.BatchTrial) string { return t.Digest }},
	{"outcome", func(t *contract.BatchTrial) string { return t.Outcome }},
	{"timed_out", func(t *contract.BatchTrial) string { return strconv.FormatBool(t.TimedOut) }},
	{"reward", func(t *contract.BatchTrial) string { return optf(t.Reward) }},
	{"rewards", func(t *contract.BatchTrial) string { return jsonCell[string](nil, t.Rewards) }},
	{"error.class", errField(func(e *contract.TrialError) string { return e.Class })},
	{"error.code", errField(func(e *contract.TrialError) string { return e.Code })},
	{"error.stage", errField(func(e *contract.TrialError) string { return e.Stage })},
	{"error.message", errField(func(e *contract.TrialError) string { return e.Message })},
	{"error.retryable", errField(func(e *contract.TrialError) string { return strconv.FormatBool(e.Retryable) })},
	{"error.retry_after_seconds", errField(func(e *contract.TrialError) string { return ftoa(e.RetryAfterSeconds) })},
	{"reason", func(t *contract.BatchTrial) string { return t.Reason }},
	{"attempts", func(t *contract.BatchTrial) string { return itoa(int64(t.Attempts)) }},
	{"timings.queued_ms", func(t *contract.BatchTrial) string { return itoa(t.Timings.QueuedMillis) }},
	{"timings.started_ms", func(t *contract.BatchTrial) string { return itoa(t.Timings.StartedMillis) }},
	{"timings.setup_end_ms", func(t *contract.BatchTrial) string { return itoa(t.Timings.SetupEndMillis) }},
	{"timings.run_end_ms", func(t *contract.BatchTrial) string { return itoa(t.Timings.RunEndMillis) }},
	{"timings.grade_end_ms", func(t *contract.BatchTrial) string { return itoa(t.Timings.GradeEndMillis) }},
	{"timings.ended_ms", func(t *contract.BatchTrial) string { return itoa(t.Timings.EndedMillis) }},
	{"timings.duration_s", func(t *contract.BatchTrial) string { return ftoa(t.Timings.DurationSeconds) }},
	{"timings.run_s", func(t *contract.BatchTrial) string { return ftoa(t.Timings.RunSeconds) }},
	{"timings.setup_s", func(t *contract.BatchTrial) string { return ftoa(t.Timings.SetupSeconds) }},
	{"timings.grade_s", func(t *contract.BatchTrial) string { return ftoa(t.Timings.GradeSeconds) }},
	{"usage.input_tokens", usageField(func(u *contract.TrialUsage) int64 { return u.InputTokens })},
	{"usage.cached_input_tokens", usageField(func(u *contract.TrialUsage) int64 { return u.CachedInputTokens })},
	{"usage.output_tokens", usageField(func(u *contract.TrialUsage) int64 { return u.OutputTokens })},
	{"cost_usd", func(t *contract.BatchTrial) string { return optf(t.CostUSD) }},
	{"cost_source", func(t *contract.BatchTrial) string { return t.CostSource }},
	{"harness", func(t *contract.BatchTrial) string { return t.Harness }},
	{"adapter_id", func(t *contract.BatchTrial) string { return t.AdapterID }},
	{"model", func(t *contract.BatchTrial) string { return t.Model }},
	{"quota_key", func(t *contract.BatchTrial) string { return t.QuotaKey }},
	{"host", func(t *contract.BatchTrial) string { return t.Host }},
	{"runtime_ids", func(t *contract.BatchTrial) string { return jsonCell(t.RuntimeIDs, nil) }},
	{"paths.dir", func(t *contract.BatchTrial) string { return t.Paths.Dir }},
	{"paths.run_result", func(t *contract.BatchTrial) string { return t.Paths.RunResult }},
	{"paths.events", func(t *contract.BatchTrial) string { return t.Paths.Events }},
	{"paths.output", func(t *contract.BatchTrial) string { return t.Paths.Output }},
	{"paths.grader_log", func(t *contract.BatchTrial) string { return t.Paths.GraderLog }},
	{"paths.workspace", func(t *contract.BatchTrial) string { return t.Paths.Workspace }},
}

// WriteTrialsCSV writes trials.csv: a header and one row per record, in
// the order given (the columns of docs/batch-report.md).
func WriteTrialsCSV(w io.Writer, trials []*contract.BatchTrial) error {
	cw := csv.NewWriter(w)
	row := make([]string, len(trialColumns))
	for i, c := range trialColumns {
		row[i] = c.name
	}
	if err := cw.Write(row); err != nil {
		return err
	}
	for _, t := range trials {
		for i, c := range trialColumns {
			row[i] = c.get(t)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeTasksCSV writes one row per task and config.
func writeTasksCSV(w io.Writer, s *contract.BatchSummary) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"task", "config", "planned", "scored", "passes", "errors", "pending", "pass_rate_scored"}); err != nil {
		return err
	}
	for _, t := range s.Tasks {
		for _, c := range s.Configs {
			cell, ok := t.PerConfig[c.Config]
			if !ok {
				continue
			}
			rate := ""
			if cell.Trials > 0 {
				rate = ftoa(round6(float64(cell.Passes) / float64(cell.Trials)))
			}
			row := []string{t.Task, c.Config, itoa(int64(cell.Planned)), itoa(int64(cell.Trials)), itoa(int64(cell.Passes)),
				itoa(int64(cell.Errors)), itoa(int64(cell.Pending)), rate}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
