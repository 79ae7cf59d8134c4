package contract

import "encoding/json"

// BatchSchemaVersion is the schema_version of a batch spec.
const BatchSchemaVersion = "fabric.batch/v1alpha1"

// BatchTrialSchemaVersion is the schema_version of a trial.json record.
const BatchTrialSchemaVersion = "fabric.batch.trial/v1alpha1"

// BatchSpec (fabric.batch/v1alpha1) is N tasks x M agent configs x K
// repeats, with the grader that scores each trial, the limits the runner
// keeps, what is retried and how the report is drawn. A field without
// omitempty is required.
type BatchSpec struct {
	SchemaVersion string         `json:"schema_version" jsonschema:"const=fabric.batch/v1alpha1"`
	Metadata      BatchMetadata  `json:"metadata"`
	Tasks         BatchTasks     `json:"tasks"`
	Configs       []BatchConfig  `json:"configs" jsonschema:"minItems=1"`
	Repeats       int            `json:"repeats,omitempty" jsonschema:"minimum=1,default=1"`
	Grader        *GraderSpec    `json:"grader,omitempty"`
	Limits        *BatchLimits   `json:"limits,omitempty"`
	Retry         *RetryPolicy   `json:"retry,omitempty"`
	Pricing       []ModelPrice   `json:"pricing,omitempty"`
	Report        *ReportOptions `json:"report,omitempty"`
	// KeepWorkspaces says which trial workspaces stay on disk after the
	// trial: never (default), on_failure (failed or errored) or always.
	KeepWorkspaces string `json:"keep_workspaces,omitempty" jsonschema:"enum=never,enum=on_failure,enum=always,default=never"`
}

// BatchMetadata names a batch.
type BatchMetadata struct {
	Name        string `json:"name" jsonschema:"minLength=1,pattern=^[A-Za-z0-9][A-Za-z0-9._-]*$"`
	Description string `json:"description,omitempty"`
}

// BatchTasks says where the tasks come from: a directory of task
// directories (each with task.yaml), a JSONL file of tasks, inline items,
// or any mix; include/exclude are glob patterns on task ids.
type BatchTasks struct {
	Dir     string      `json:"dir,omitempty"`
	File    string      `json:"file,omitempty"`
	Include []string    `json:"include,omitempty"`
	Exclude []string    `json:"exclude,omitempty"`
	Items   []BatchTask `json:"items,omitempty"`
}

// BatchTask is one task: the input sent to the agent, the workspace it
// works in, and how the result is graded. In a task directory it is
// task.yaml; Dir is then that directory (its tests/ are copied into the
// trial only after the run, and setup.sh runs before it).
type BatchTask struct {
	ID        string         `json:"id" jsonschema:"minLength=1,pattern=^[A-Za-z0-9][A-Za-z0-9._-]*$"`
	Input     *TaskInput     `json:"input,omitempty"`
	Workspace *TaskWorkspace `json:"workspace,omitempty"`
	Grader    *GraderSpec    `json:"grader,omitempty"`
	// TimeoutSeconds bounds the agent's run of this task (the trial's
	// run_timeout when unset).
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty" jsonschema:"minimum=0"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	// Dir is the task's directory (tasks.dir), set by the loader.
	Dir string `json:"dir,omitempty"`
}

// TaskInput is the text sent to the agent, inline or from a file relative
// to the task (or spec) directory.
type TaskInput struct {
	Text string `json:"text,omitempty"`
	File string `json:"file,omitempty"`
}

// TaskWorkspace is what the agent's workspace starts as: a copy of a
// template directory (default: the task directory's workspace/), then the
// setup commands run in it with sh -c.
type TaskWorkspace struct {
	Template string   `json:"template,omitempty"`
	Setup    []string `json:"setup,omitempty"`
}

// BatchConfig is one agent configuration under test: an ordinary Fabric
// config file, or one agent of a deployment document, with overrides at
// dotted paths of the FabricConfig.
type BatchConfig struct {
	ID         string                     `json:"id" jsonschema:"minLength=1,pattern=^[A-Za-z0-9][A-Za-z0-9._-]*$"`
	Config     string                     `json:"config,omitempty"`
	Deployment string                     `json:"deployment,omitempty"`
	Agent      string                     `json:"agent,omitempty"`
	Overrides  map[string]json.RawMessage `json:"overrides,omitempty"`
	// QuotaKey names the quota this config draws from (limits.quotas);
	// default: the default model's api_key_env name, else its provider.
	QuotaKey string `json:"quota_key,omitempty"`
}

// Grader kinds.
const (
	GraderCommand     = "command"
	GraderOutputMatch = "output_match"
	GraderNone        = "none"
)

// GraderSpec scores a trial after the agent's run.
//
// command runs in the trial's workspace with FABRIC_TRIAL_DIR,
// FABRIC_WORKSPACE, FABRIC_OUTPUT_FILE, FABRIC_RESULT_FILE and
// FABRIC_TASK_DIR set; it passes with exit code 0 and fails with 1 (any
// other exit code is a grader error), unless reward names a file it writes
// ({"reward": R, ...}) whose reward is then compared with pass_threshold.
// In command, {task_dir}, {workspace} and {trial_dir} are replaced.
//
// output_match compares the final output text with match.
type GraderSpec struct {
	Kind           string       `json:"kind" jsonschema:"enum=command,enum=output_match,enum=none"`
	Command        []string     `json:"command,omitempty"`
	Reward         *RewardSpec  `json:"reward,omitempty"`
	Match          *OutputMatch `json:"match,omitempty"`
	TimeoutSeconds float64      `json:"timeout_seconds,omitempty" jsonschema:"minimum=0"`
}

// RewardSpec reads a reward file the grader command writes.
type RewardSpec struct {
	File          string   `json:"file" jsonschema:"minLength=1"`
	PassThreshold *float64 `json:"pass_threshold,omitempty"`
}

// OutputMatch is what output_match requires of the final output: all the
// fields given must hold.
type OutputMatch struct {
	Equals     string `json:"equals,omitempty"`
	Contains   string `json:"contains,omitempty"`
	Regex      string `json:"regex,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
}

// BatchLimits bound what runs at once and what a batch may spend.
type BatchLimits struct {
	Concurrency int            `json:"concurrency,omitempty" jsonschema:"minimum=1,default=4"`
	PerConfig   map[string]int `json:"per_config,omitempty"`
	// RunTimeoutSeconds is the whole trial's wall clock (setup, run and
	// grade); at the end the run is cancelled through Fabric.
	RunTimeoutSeconds float64      `json:"run_timeout_seconds,omitempty" jsonschema:"minimum=0"`
	BudgetUSD         float64      `json:"budget_usd,omitempty" jsonschema:"minimum=0"`
	Quotas            []QuotaLimit `json:"quotas,omitempty"`
}

// QuotaLimit limits the trials that draw from one quota key.
type QuotaLimit struct {
	Key             string  `json:"key" jsonschema:"minLength=1"`
	MaxInFlight     int     `json:"max_in_flight,omitempty" jsonschema:"minimum=0"`
	RunsPerMinute   float64 `json:"runs_per_minute,omitempty" jsonschema:"minimum=0"`
	TokensPerMinute float64 `json:"tokens_per_minute,omitempty" jsonschema:"minimum=0"`
}

// RetryPolicy retries infrastructure errors only: a graded trial (passed
// or failed) is never run again.
type RetryPolicy struct {
	MaxAttempts int      `json:"max_attempts,omitempty" jsonschema:"minimum=1,default=1"`
	Classes     []string `json:"classes,omitempty"`
	Backoff     *Backoff `json:"backoff,omitempty"`
}

// Backoff is an exponential delay between attempts.
type Backoff struct {
	InitialSeconds float64 `json:"initial_seconds,omitempty" jsonschema:"minimum=0"`
	MaxSeconds     float64 `json:"max_seconds,omitempty" jsonschema:"minimum=0"`
	Factor         float64 `json:"factor,omitempty" jsonschema:"minimum=1"`
}

// ModelPrice prices one model's tokens in USD per million.
type ModelPrice struct {
	Model              string  `json:"model" jsonschema:"minLength=1"`
	InputPerMTok       float64 `json:"input_per_mtok" jsonschema:"minimum=0"`
	CachedInputPerMTok float64 `json:"cached_input_per_mtok,omitempty" jsonschema:"minimum=0"`
	OutputPerMTok      float64 `json:"output_per_mtok" jsonschema:"minimum=0"`
}

// ReportOptions say what the report computes.
type ReportOptions struct {
	// K lists the k of pass@k and pass^k; each must be at most repeats.
	K        []int      `json:"k,omitempty"`
	CI       *CIOptions `json:"ci,omitempty"`
	Baseline string     `json:"baseline,omitempty"`
	// CompletionGate is the least fraction of planned trials that must be
	// scored for the batch to count as complete (default 0.9).
	CompletionGate *float64 `json:"completion_gate,omitempty" jsonschema:"minimum=0,maximum=1"`
}

// CIOptions choose the confidence interval of pass rates: auto is Wilson
// with one repeat and a task-clustered bootstrap with more.
type CIOptions struct {
	Method    string  `json:"method,omitempty" jsonschema:"enum=auto,enum=wilson,enum=bootstrap,default=auto"`
	Level     float64 `json:"level,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1,default=0.95"`
	Resamples int     `json:"resamples,omitempty" jsonschema:"minimum=1,default=2000"`
	Seed      int     `json:"seed,omitempty" jsonschema:"default=1"`
}

// Trial outcomes.
const (
	TrialPassed    = "passed"
	TrialFailed    = "failed"
	TrialErrored   = "error"
	TrialCancelled = "cancelled"
	TrialSkipped   = "skipped"
)

// Error classes of a trial in outcome error.
const (
	ErrorClassModel   = "model"
	ErrorClassHarness = "harness"
	ErrorClassSetup   = "setup"
	ErrorClassGrader  = "grader"
	ErrorClassFabric  = "fabric"
)

// Cost sources.
const (
	CostReported = "reported"
	CostPriced   = "priced"
	CostUnknown  = "unknown"
)

// BatchTrial is one trial's record (trial.json): written once, by rename,
// when the trial is over; its presence is what makes the trial done.
type BatchTrial struct {
	SchemaVersion string `json:"schema_version" jsonschema:"const=fabric.batch.trial/v1alpha1"`
	Batch         string `json:"batch"`
	TrialID       string `json:"trial_id"`
	Task          string `json:"task"`
	Config        string `json:"config"`
	Repeat        int    `json:"repeat"`
	// Digest identifies everything that defines the trial: the task, the
	// config after overrides, the repeat, the grader and Fabric's version.
	Digest  string `json:"digest"`
	Outcome string `json:"outcome" jsonschema:"enum=passed,enum=failed,enum=error,enum=cancelled,enum=skipped"`
	// TimedOut says the run hit its timeout; the trial was graded anyway.
	TimedOut bool               `json:"timed_out"`
	Reward   *float64           `json:"reward,omitempty"`
	Rewards  map[string]float64 `json:"rewards,omitempty"`
	Error    *TrialError        `json:"error,omitempty"`
	// Reason says why a trial was cancelled or skipped (interrupted,
	// budget, circuit_open, timeout).
	Reason     string        `json:"reason,omitempty"`
	Attempts   int           `json:"attempts"`
	Timings    TrialTimings  `json:"timings"`
	Usage      *TrialUsage   `json:"usage,omitempty"`
	CostUSD    *float64      `json:"cost_usd,omitempty"`
	CostSource string        `json:"cost_source" jsonschema:"enum=reported,enum=priced,enum=unknown"`
	Harness    string        `json:"harness,omitempty"`
	AdapterID  string        `json:"adapter_id,omitempty"`
	Model      string        `json:"model,omitempty"`
	QuotaKey   string        `json:"quota_key,omitempty"`
	Host       string        `json:"host,omitempty"`
	RuntimeIDs []string      `json:"runtime_ids,omitempty"`
	Paths      TrialPaths    `json:"paths"`
	History    []AttemptNote `json:"history,omitempty"`
}

// TrialError is the error of a trial in outcome error: Fabric's ErrorInfo
// with the class that decides whether it is retried.
type TrialError struct {
	Class     string `json:"class" jsonschema:"enum=model,enum=harness,enum=setup,enum=grader,enum=fabric"`
	Code      string `json:"code"`
	Stage     string `json:"stage,omitempty"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	// RetryAfterSeconds is the delay a rate limit asked for, if any.
	RetryAfterSeconds float64 `json:"retry_after_seconds,omitempty"`
}

// AttemptNote is what an earlier attempt of the trial ended with.
type AttemptNote struct {
	Attempt int         `json:"attempt"`
	Outcome string      `json:"outcome"`
	Error   *TrialError `json:"error,omitempty"`
}

// TrialTimings are wall-clock times in Unix milliseconds (0: the phase did
// not happen) and the whole trial's duration.
type TrialTimings struct {
	QueuedMillis    int64   `json:"queued_ms,omitempty"`
	StartedMillis   int64   `json:"started_ms,omitempty"`
	SetupEndMillis  int64   `json:"setup_end_ms,omitempty"`
	RunEndMillis    int64   `json:"run_end_ms,omitempty"`
	GradeEndMillis  int64   `json:"grade_end_ms,omitempty"`
	EndedMillis     int64   `json:"ended_ms,omitempty"`
	DurationSeconds float64 `json:"duration_s"`
	RunSeconds      float64 `json:"run_s"`
	SetupSeconds    float64 `json:"setup_s"`
	GradeSeconds    float64 `json:"grade_s"`
}

// TrialUsage is the tokens a trial's run used, as the harness reported.
type TrialUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"`
	OutputTokens      int64 `json:"output_tokens"`
}

// TrialPaths are relative to the batch directory.
type TrialPaths struct {
	Dir       string `json:"dir"`
	RunResult string `json:"run_result,omitempty"`
	Events    string `json:"events,omitempty"`
	Output    string `json:"output,omitempty"`
	GraderLog string `json:"grader_log,omitempty"`
	Workspace string `json:"workspace,omitempty"`
}
