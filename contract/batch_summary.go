package contract

// BatchSummarySchemaVersion is the schema_version of a batch's summary.json.
const BatchSummarySchemaVersion = "fabric.batch.summary/v1alpha1"

// BatchSummary (summary.json) is what a batch's trial records add up to:
// counts, pass rates with their intervals, latency, tokens and cost per
// config, paired comparisons of configs, and per-task counts. It is a
// function of the spec and the records only (no field comes from the
// clock of the report's run), so a rerun gives the same bytes. Floats are
// rounded to 6 significant digits. docs/batch-report.md defines each
// figure.
type BatchSummary struct {
	SchemaVersion string `json:"schema_version" jsonschema:"const=fabric.batch.summary/v1alpha1"`
	Batch         string `json:"batch"`
	SpecDigest    string `json:"spec_digest"`
	FabricVersion string `json:"fabric_version"`
	// StartedMillis and EndedMillis are the earliest start and the latest
	// end of any trial (Unix milliseconds; 0 when no trial has run).
	StartedMillis int64 `json:"started_ms,omitempty"`
	EndedMillis   int64 `json:"ended_ms,omitempty"`
	// WallSeconds is EndedMillis - StartedMillis in seconds.
	WallSeconds float64 `json:"wall_s"`
	Repeats     int     `json:"repeats"`
	// K lists the k of pass@k and pass^k that the report computed.
	K []int `json:"k,omitempty"`
	// CI is how pass@1's interval was computed.
	CI       BatchCISummary `json:"ci"`
	Baseline string         `json:"baseline,omitempty"`
	// Harnesses, Adapters and Models are the distinct values seen in the
	// trial records, sorted.
	Harnesses []string             `json:"harnesses,omitempty"`
	Adapters  []string             `json:"adapters,omitempty"`
	Models    []string             `json:"models,omitempty"`
	Totals    BatchCounts          `json:"totals"`
	Configs   []BatchConfigSummary `json:"configs"`
	Pairs     []BatchPairSummary   `json:"pairs"`
	Tasks     []BatchTaskSummary   `json:"tasks"`
	// Completion is the fraction of planned trials that were scored, and
	// whether it reaches the gate.
	Completion BatchCompletion `json:"completion"`
}

// BatchCISummary is the interval method actually used (wilson or
// bootstrap, never auto) with its level, and for the bootstrap its
// resamples and seed.
type BatchCISummary struct {
	Method    string  `json:"method" jsonschema:"enum=wilson,enum=bootstrap"`
	Level     float64 `json:"level"`
	Resamples int     `json:"resamples,omitempty"`
	Seed      int     `json:"seed,omitempty"`
}

// BatchCounts count trials by outcome. Scored is passed plus failed
// (timed-out trials that were graded included); Errored counts outcome
// error; Pending counts planned trials without a record.
type BatchCounts struct {
	Planned   int `json:"n_planned"`
	Scored    int `json:"n_scored"`
	Passed    int `json:"n_passed"`
	Failed    int `json:"n_failed"`
	TimedOut  int `json:"n_timed_out"`
	Errored   int `json:"n_errored"`
	Cancelled int `json:"n_cancelled"`
	Skipped   int `json:"n_skipped"`
	Pending   int `json:"n_pending"`
}

// BatchConfigSummary is one config's figures.
type BatchConfigSummary struct {
	Config string `json:"config"`
	BatchCounts
	// Tasks is the number of tasks planned for the config.
	Tasks int `json:"n_tasks"`
	// Errors counts trials in outcome error by error class.
	Errors map[string]int `json:"errors"`
	// Retries counts attempts beyond the first, over all records.
	Retries   int          `json:"retries"`
	Harnesses []string     `json:"harnesses,omitempty"`
	Models    []string     `json:"models,omitempty"`
	PassAt1   BatchPassAt1 `json:"pass_at_1"`
	// PassAtK and PassHatK map k (as a decimal string) to the mean over
	// tasks of pass@k and pass^k on scored trials; a k above some task's
	// scored trials is left out.
	PassAtK   map[string]float64 `json:"pass_at_k,omitempty"`
	PassHatK  map[string]float64 `json:"pass_hat_k,omitempty"`
	DurationS *BatchQuantiles    `json:"duration_s,omitempty"`
	// Tokens are the mean tokens per trial over the records with usage.
	Tokens  *BatchTokens `json:"tokens,omitempty"`
	CostUSD BatchCost    `json:"cost_usd"`
}

// BatchPassAt1 is pass@1 with both denominators: Strict counts errors,
// cancelled, skipped and pending trials as failures over the planned
// trials; Scored uses only scored trials. Each is the mean over tasks of
// the task's pass fraction. CILow and CIHigh bound Strict; ScoredCILow
// and ScoredCIHigh bound Scored. A figure without trials is absent.
type BatchPassAt1 struct {
	Strict       *float64 `json:"strict,omitempty"`
	Scored       *float64 `json:"scored,omitempty"`
	CILow        *float64 `json:"ci_low,omitempty"`
	CIHigh       *float64 `json:"ci_high,omitempty"`
	ScoredCILow  *float64 `json:"scored_ci_low,omitempty"`
	ScoredCIHigh *float64 `json:"scored_ci_high,omitempty"`
	// SE is the standard error over tasks of Strict.
	SE     *float64 `json:"se,omitempty"`
	Method string   `json:"method" jsonschema:"enum=wilson,enum=bootstrap"`
}

// BatchQuantiles are sample quantiles (linear interpolation, type 7) and
// the number of values N.
type BatchQuantiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// BatchTokens are mean tokens per trial over N records with usage.
type BatchTokens struct {
	N      int     `json:"n"`
	Input  float64 `json:"input"`
	Cached float64 `json:"cached"`
	Output float64 `json:"output"`
}

// BatchCost is the cost of a config's trials in USD: Total sums the
// records with a cost, PerTrial divides it by their number and PerPass by
// the passed trials. SourceCounts counts records by cost_source, so a mix
// of reported and priced costs, or unknown ones, is visible.
type BatchCost struct {
	Total        *float64       `json:"total,omitempty"`
	PerTrial     *float64       `json:"per_trial,omitempty"`
	PerPass      *float64       `json:"per_pass,omitempty"`
	SourceCounts map[string]int `json:"source_counts"`
}

// BatchPairSummary compares configs A and B on the tasks both scored: per
// task the difference of scored pass fractions a_t - b_t. With a
// baseline, B is the baseline.
type BatchPairSummary struct {
	A        string  `json:"a"`
	B        string  `json:"b"`
	Tasks    int     `json:"n_tasks"`
	ABetter  int     `json:"a_better"`
	BBetter  int     `json:"b_better"`
	Ties     int     `json:"ties"`
	MeanDiff float64 `json:"mean_diff"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	// PValue is the exact two-sided p-value of Test; PHolm is it after
	// Holm's adjustment over all pairs.
	PValue float64 `json:"p_value"`
	PHolm  float64 `json:"p_holm"`
	// Test is mcnemar (one trial per task and config: exact binomial on
	// the discordant tasks) or sign (exact binomial on tasks won and lost).
	Test string `json:"test" jsonschema:"enum=mcnemar,enum=sign"`
}

// BatchTaskSummary is one task's counts per config.
type BatchTaskSummary struct {
	Task      string                   `json:"task"`
	PerConfig map[string]BatchTaskCell `json:"per_config"`
}

// BatchTaskCell is one task and config: passes out of scored trials
// (Trials), errors, and the planned and pending trials.
type BatchTaskCell struct {
	Passes  int `json:"passes"`
	Trials  int `json:"trials"`
	Errors  int `json:"errors"`
	Planned int `json:"planned"`
	Pending int `json:"pending"`
}

// BatchCompletion is the scored fraction of planned trials and the gate
// it is held to.
type BatchCompletion struct {
	Fraction float64 `json:"fraction"`
	Gate     float64 `json:"gate"`
	Met      bool    `json:"met"`
}
