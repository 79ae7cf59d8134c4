package temporal

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	sdktemporal "go.temporal.io/sdk/temporal"
)

// BatchQueue is the task queue of the workflows and of the planning
// activities; every worker polls it.
const BatchQueue = "fabric-batch"

// trialQueuePrefix starts the task queue of a quota key's trials.
const trialQueuePrefix = "fabric-trials/"

// WorkflowIDPrefix starts every workflow id of this backend: a batch is
// fabric-batch/<name>, its trials fabric-batch/<name>/<trial-id>.
const WorkflowIDPrefix = "fabric-batch/"

// ChildrenPerRun is how many trial workflows one run of BatchWorkflow
// starts before it continues as new.
const ChildrenPerRun = 1000

// DefaultHeartbeatTimeout is the activity heartbeat timeout when the
// submitter sets none: a host silent for this long is taken as lost.
const DefaultHeartbeatTimeout = 60 * time.Second

// defaultTrialTimeout bounds a trial whose spec sets no run timeout.
const defaultTrialTimeout = time.Hour

// startToCloseSlack is added to the trial timeout to make the activity's
// StartToClose: the trial's own timeout always fires first.
const startToCloseSlack = 2 * time.Minute

// hostLossAttempts is how many extra activity attempts a trial gets for
// lost hosts, beyond the spec's retry max_attempts.
const hostLossAttempts = 3

// Search attributes of TrialWorkflow. Register them on the namespace
// (SearchAttributeTypes) before the first batch.
var (
	SABatch      = sdktemporal.NewSearchAttributeKeyKeyword("FabricBatch")
	SATask       = sdktemporal.NewSearchAttributeKeyKeyword("FabricTask")
	SAConfig     = sdktemporal.NewSearchAttributeKeyKeyword("FabricConfig")
	SARepeat     = sdktemporal.NewSearchAttributeKeyInt64("FabricRepeat")
	SAOutcome    = sdktemporal.NewSearchAttributeKeyKeyword("FabricOutcome")
	SAErrorClass = sdktemporal.NewSearchAttributeKeyKeyword("FabricErrorClass")
	SACostUSD    = sdktemporal.NewSearchAttributeKeyFloat64("FabricCostUSD")
)

// BatchRef is the input of BatchWorkflow: where the batch lives and what
// it must be. Workers open the batch from it.
type BatchRef struct {
	// URI is the batch directory, file:///abs/dir.
	URI string `json:"uri"`
	// Spec is the absolute path of the spec file the batch was opened
	// with; SpecDigest is its digest, checked by every worker.
	Spec       string `json:"spec"`
	SpecDigest string `json:"spec_digest"`
	Name       string `json:"name"`
	// PlanFile lists the trials to run (WritePlan), relative to the dir.
	PlanFile string `json:"plan_file"`
	// HeartbeatTimeoutSeconds is the RunTrial heartbeat timeout (0:
	// DefaultHeartbeatTimeout).
	HeartbeatTimeoutSeconds float64 `json:"heartbeat_timeout_s,omitempty"`
}

// Plan is what PlanBatch found: how many trials the submission runs and
// the limits the workflows apply. The trial list itself stays in the
// batch directory (PlanFile) and is read a page at a time.
type Plan struct {
	Count               int     `json:"count"`
	PlanFile            string  `json:"plan_file"`
	Concurrency         int     `json:"concurrency"`
	TrialTimeoutSeconds float64 `json:"trial_timeout_s"`
	MaxAttempts         int     `json:"max_attempts"`
}

// PlannedTrial is one pending trial as the workflow needs it.
type PlannedTrial struct {
	ID       string `json:"id"`
	Task     string `json:"task"`
	Config   string `json:"config"`
	Repeat   int    `json:"repeat"`
	QuotaKey string `json:"quota_key,omitempty"`
}

// BatchState is what BatchWorkflow carries across Continue-As-New.
type BatchState struct {
	Ref    BatchRef      `json:"ref"`
	Plan   *Plan         `json:"plan,omitempty"`
	Offset int           `json:"offset"`
	Result BatchProgress `json:"result"`
	// ChildrenPerRun overrides ChildrenPerRun (tests).
	ChildrenPerRun int `json:"children_per_run,omitempty"`
}

// BatchProgress counts what the batch's trial workflows ended with.
type BatchProgress struct {
	Planned  int            `json:"planned"`
	Started  int            `json:"started"`
	Existing int            `json:"existing"` // already started elsewhere: skipped
	Failed   int            `json:"failed"`   // trial workflows that ended without a record
	Outcomes map[string]int `json:"outcomes,omitempty"`
}

// TrialRef is the input of TrialWorkflow and RunTrial.
type TrialRef struct {
	Batch BatchRef     `json:"batch"`
	Trial PlannedTrial `json:"trial"`
	Plan  Plan         `json:"plan"`
	// SinceMillis is when the trial workflow started (Unix ms): a
	// trial.json started later is this workflow's own.
	SinceMillis int64 `json:"since_ms,omitempty"`
}

// TrialSummary is what RunTrial returns: a few fields and the path of the
// committed trial.json, never the record's bulk.
type TrialSummary struct {
	TrialID    string   `json:"trial_id"`
	Outcome    string   `json:"outcome"`
	ErrorClass string   `json:"error_class,omitempty"`
	ErrorCode  string   `json:"error_code,omitempty"`
	Attempts   int      `json:"attempts"`
	CostUSD    *float64 `json:"cost_usd,omitempty"`
	Host       string   `json:"host,omitempty"`
	// TrialJSON is the record's URI (file:///...).
	TrialJSON string `json:"trial_json"`
}

// TrialQueue is the task queue of a quota key's trials.
func TrialQueue(quotaKey string) string {
	if quotaKey == "" {
		quotaKey = "default"
	}
	var b strings.Builder
	for _, r := range quotaKey {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return trialQueuePrefix + b.String()
}

// BatchWorkflowID is the id of a batch's workflow.
func BatchWorkflowID(name string) string { return WorkflowIDPrefix + name }

// TrialWorkflowID is the id of one trial's workflow.
func TrialWorkflowID(name, trialID string) string {
	return WorkflowIDPrefix + name + "/" + trialID
}

// DirURI is the file URI of an absolute directory.
func DirURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// URIDir is the directory of a file URI.
func URIDir(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("batch uri %q: %w", uri, err)
	}
	if u.Scheme != "file" || u.Host != "" || !filepath.IsAbs(filepath.FromSlash(u.Path)) {
		return "", fmt.Errorf("batch uri %q: want file:///absolute/dir", uri)
	}
	return filepath.Clean(filepath.FromSlash(u.Path)), nil
}

func (r BatchRef) heartbeatTimeout() time.Duration {
	if r.HeartbeatTimeoutSeconds > 0 {
		return time.Duration(r.HeartbeatTimeoutSeconds * float64(time.Second))
	}
	return DefaultHeartbeatTimeout
}

func (p Plan) startToClose() time.Duration {
	d := defaultTrialTimeout
	if p.TrialTimeoutSeconds > 0 {
		d = time.Duration(p.TrialTimeoutSeconds * float64(time.Second))
	}
	return d + startToCloseSlack
}
