package contract

import "strings"

// In-toto and qualification identifiers of a qualification receipt.
const (
	// InTotoStatementV1 is the _type of an in-toto Statement v1.
	InTotoStatementV1 = "https://in-toto.io/Statement/v1"
	// InTotoPayloadType is the DSSE payload type of an in-toto Statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
	// QualificationPredicateV1 is the predicateType of a qualification
	// (docs/predicates/qualification-v1.md).
	QualificationPredicateV1 = "https://github.com/fabric-runtime/fabric/predicates/qualification/v1"
	// QualificationRuleV1 is the rule a qualification verdict applies.
	QualificationRuleV1 = "fabric.qualification/v1: no MANDATORY fail|not_tested; no CAPABILITY fail; every observable postcondition agrees"
)

// Qualification result verdicts: the suite's pass, fail and skip, and
// not_tested for an item that ran (or should have) without the
// observation its postcondition needs.
const (
	QualificationPass      = "pass"
	QualificationFail      = "fail"
	QualificationSkip      = "skip"
	QualificationNotTested = "not_tested"
)

// Evidence levels of a result: observed when an independent observer saw
// the postcondition, claimed when only the executor said so.
const (
	EvidenceObserved = "observed"
	EvidenceClaimed  = "claimed"
)

// QualificationStatement is an in-toto Statement v1 whose predicate is a
// qualification: it says which package, adapter descriptor, artifacts and
// host binary (the subjects, by digest) passed which checks on which
// platform. Receipts carry it in a DSSE envelope signed by a qualifier key.
type QualificationStatement struct {
	Type          string                 `json:"_type" jsonschema:"const=https://in-toto.io/Statement/v1"`
	Subject       []StatementSubject     `json:"subject" jsonschema:"minItems=1"`
	PredicateType string                 `json:"predicateType" jsonschema:"const=https://github.com/fabric-runtime/fabric/predicates/qualification/v1"`
	Predicate     QualificationPredicate `json:"predicate"`
}

// StatementSubject is one artifact a statement is about: a name and its
// digests (algorithm to lowercase hex).
type StatementSubject struct {
	Name   string            `json:"name" jsonschema:"minLength=1"`
	Digest map[string]string `json:"digest" jsonschema:"minProperties=1"`
}

// QualificationPredicate is what a qualification run found.
type QualificationPredicate struct {
	Package     QualifiedPackage         `json:"package"`
	Platform    string                   `json:"platform" jsonschema:"minLength=1"`
	Suite       QualificationSuite       `json:"suite"`
	Environment QualificationEnvironment `json:"environment"`
	Run         QualificationRun         `json:"run"`
	Results     []QualificationResult    `json:"results"`
	Summary     QualificationSummary     `json:"summary"`
	Verdict     QualificationVerdict     `json:"verdict"`
}

// QualifiedPackage names the package release qualified.
type QualifiedPackage struct {
	ID       string `json:"id" jsonschema:"minLength=1"`
	Version  string `json:"version" jsonschema:"minLength=1"`
	Contract string `json:"contract" jsonschema:"minLength=1"`
}

// QualificationSuite is the suite that ran and the profile it used.
type QualificationSuite struct {
	Name     string `json:"name" jsonschema:"minLength=1"`
	Version  string `json:"version" jsonschema:"minLength=1"`
	Revision string `json:"revision,omitempty"`
	// Profile is the sha256 of the conformance profile file.
	Profile Digest `json:"profile"`
}

// Digest is a sha256 digest in lowercase hex.
type Digest struct {
	SHA256 string `json:"sha256" jsonschema:"pattern=^[0-9a-f]{64}$"`
}

// QualificationEnvironment is where the run happened.
type QualificationEnvironment struct {
	OS     string `json:"os"`
	Kernel string `json:"kernel,omitempty"`
	Arch   string `json:"arch"`
	// Node is the version of the node on PATH, when there is one.
	Node   string        `json:"node,omitempty"`
	Fabric FabricVersion `json:"fabric"`
	// ModelEndpoint names the scripted model endpoint the suite served,
	// as "modelstub script sha256:<hex>".
	ModelEndpoint string `json:"model_endpoint,omitempty"`
}

// FabricVersion is the Fabric build that qualified.
type FabricVersion struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
}

// QualificationRun is when the run happened (RFC 3339).
type QualificationRun struct {
	StartedOn  string `json:"started_on"`
	FinishedOn string `json:"finished_on"`
}

// QualificationResult is one check: a conformance item with its tier,
// verdict, and the executor's claim and the observer's observation kept
// apart.
type QualificationResult struct {
	ID            string                    `json:"id" jsonschema:"minLength=1"`
	Name          string                    `json:"name"`
	Tier          string                    `json:"tier" jsonschema:"enum=MANDATORY,enum=CAPABILITY,enum=ADVISORY,enum=INFORMATIONAL"`
	Verdict       string                    `json:"verdict" jsonschema:"enum=pass,enum=fail,enum=skip,enum=not_tested"`
	ElapsedMS     float64                   `json:"elapsed_ms"`
	Detail        string                    `json:"detail,omitempty"`
	EvidenceLevel string                    `json:"evidence_level,omitempty" jsonschema:"enum=observed,enum=claimed"`
	Claim         *QualificationClaim       `json:"claim,omitempty"`
	Observation   *QualificationObservation `json:"observation,omitempty"`
	Evidence      []QualificationEvidence   `json:"evidence,omitempty"`
}

// QualificationClaim is what the executor said, and who it is.
type QualificationClaim struct {
	By        string `json:"by" jsonschema:"pattern=^executor:"`
	Statement string `json:"statement"`
}

// QualificationObservation is what an observer saw directly, never
// through the executor's channel, and by which method.
type QualificationObservation struct {
	By     string `json:"by" jsonschema:"pattern=^observer:"`
	Method string `json:"method" jsonschema:"minLength=1"`
	Result string `json:"result"`
	Agrees bool   `json:"agrees"`
	// Enforcement, Before, After and Changes are a helper operation's
	// (an "op.<id>" item): what stopped its writes (landlock-abi-N or
	// none), the fm1 digests of its watched roots before and after, and
	// every change it made (for a read operation, any change is one it
	// must not make).
	Enforcement string           `json:"enforcement,omitempty"`
	Overlay     []string         `json:"overlay,omitempty"`
	Before      string           `json:"before,omitempty"`
	After       string           `json:"after,omitempty"`
	Changes     []ManifestChange `json:"changes,omitempty"`
}

// ManifestChange is one difference between two tree manifests of the
// same roots (internal/treemanifest): the path, added, removed or
// modified, and its entry before and after.
type ManifestChange struct {
	Path   string         `json:"path" jsonschema:"minLength=1"`
	Kind   string         `json:"kind" jsonschema:"enum=added,enum=removed,enum=modified"`
	Before *ManifestEntry `json:"before,omitempty"`
	After  *ManifestEntry `json:"after,omitempty"`
}

// ManifestEntry is one path as a tree manifest records it.
type ManifestEntry struct {
	Type   string `json:"type" jsonschema:"enum=file,enum=dir,enum=symlink"`
	Mode   uint32 `json:"mode"` // permission bits
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Link   string `json:"link,omitempty"`
}

// QualificationEvidence is a document behind a result, by digest.
type QualificationEvidence struct {
	Name      string            `json:"name"`
	Digest    map[string]string `json:"digest" jsonschema:"minProperties=1"`
	MediaType string            `json:"mediaType,omitempty"`
}

// QualificationSummary adds the results up, with in-toto test-result's
// field names.
type QualificationSummary struct {
	Result      string         `json:"result" jsonschema:"enum=PASSED,enum=WARNED,enum=FAILED"`
	PassedTests []string       `json:"passedTests"`
	FailedTests []string       `json:"failedTests"`
	WarnedTests []string       `json:"warnedTests"`
	NotTested   []string       `json:"not_tested"`
	Counts      map[string]int `json:"counts"`
}

// QualificationVerdict is whether the package qualified, by which rule,
// and (when it did not) why.
type QualificationVerdict struct {
	Qualified bool     `json:"qualified"`
	Rule      string   `json:"rule"`
	Reasons   []string `json:"reasons,omitempty"`
}

// OperationResultPrefix starts the id of the result of a helper
// operation: "op.<operation id>".
const OperationResultPrefix = "op."

// ObservedResult reports whether QualificationRuleV1 holds a result with
// this id to an observation: the conformance items whose postcondition
// the suite observes itself (6, 10, 12, 13 and 14) and every helper
// operation's result. Such a result that passed on a claim alone is
// not_tested, and a receipt with one that is MANDATORY does not qualify.
func ObservedResult(id string) bool {
	switch id {
	case "6", "10", "12", "13", "14":
		return true
	}
	return strings.HasPrefix(id, OperationResultPrefix)
}
