package receipt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
)

// Error codes of receipt verification (docs/errors.md).
const (
	// CodeReceiptUnverifiable: the receipt cannot be trusted: not an
	// envelope, not an in-toto statement with a qualification predicate,
	// or not signed by a qualifier key.
	CodeReceiptUnverifiable = "receipt_unverifiable"
	// CodePackageUnqualified: a trusted receipt that does not qualify
	// this package: another subject or digest, another or no platform, a
	// verdict that is not qualified, or a MANDATORY item that failed or
	// was not tested.
	CodePackageUnqualified = "package_unqualified"
)

// MaxReceiptBytes bounds a receipt file.
const MaxReceiptBytes = 4 << 20

func receiptError(code, msg string, err error) error {
	return &contract.ConfigError{Failure: contract.Failure{Stage: contract.StagePlan, Code: code, Message: msg, Err: err}}
}

// Sign wraps the statement in a DSSE envelope (payload type
// application/vnd.in-toto+json) signed by key, a qualifier key.
func Sign(stmt *Statement, key *attest.PrivateKey) (*attest.Envelope, error) {
	if stmt == nil || key == nil {
		return nil, errors.New("receipt: sign: no statement or no key")
	}
	payload, err := json.Marshal(stmt)
	if err != nil {
		return nil, fmt.Errorf("receipt: sign: %w", err)
	}
	return attest.Sign(contract.InTotoPayloadType, payload, key)
}

// ReceiptName is the file name of a receipt: its envelope file's bytes by
// digest, sha256-<hex>.intoto.json.
func ReceiptName(envelope []byte) string {
	sum := sha256.Sum256(envelope)
	return "sha256-" + hex.EncodeToString(sum[:]) + ".intoto.json"
}

// Expectation is what a receipt must say to qualify the package the
// caller has: each field that is set is checked.
type Expectation struct {
	PackageID, PackageVersion string
	// PackageSHA256 and DescriptorSHA256 are the digests on disk.
	PackageSHA256, DescriptorSHA256 string
	// Artifacts are the package's artifacts for Platform: each must be a
	// subject with the same digests.
	Artifacts []contract.PackageArtifact
	// Platform must be the predicate's.
	Platform string
}

// ParseStatement reads a statement strictly: unknown fields, another
// _type or predicateType are errors.
func ParseStatement(data []byte) (*Statement, error) {
	var st Statement
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("statement: %w", err)
	}
	if dec.More() {
		return nil, errors.New("statement: data after the document")
	}
	switch {
	case st.Type != contract.InTotoStatementV1:
		return nil, fmt.Errorf("statement: _type %q, want %s", st.Type, contract.InTotoStatementV1)
	case st.PredicateType != contract.QualificationPredicateV1:
		return nil, fmt.Errorf("statement: predicateType %q, want %s", st.PredicateType, contract.QualificationPredicateV1)
	case len(st.Subject) == 0:
		return nil, errors.New("statement: no subject")
	}
	return &st, nil
}

// OpenReceipt parses a receipt and checks its signature against the
// qualifier keys, without judging what it says.
func OpenReceipt(envelope []byte, qualifierKeys []attest.PublicKey) (*Statement, attest.Verified, error) {
	if len(envelope) > MaxReceiptBytes {
		return nil, attest.Verified{}, receiptError(CodeReceiptUnverifiable, fmt.Sprintf("the receipt has more than %d bytes", MaxReceiptBytes), nil)
	}
	env, err := attest.ParseEnvelope(envelope)
	if err != nil {
		return nil, attest.Verified{}, receiptError(CodeReceiptUnverifiable, "not a DSSE envelope", err)
	}
	v, err := attest.Verify(env, contract.InTotoPayloadType, qualifierKeys)
	if err != nil {
		return nil, v, receiptError(CodeReceiptUnverifiable, "no valid signature by a qualifier key", err)
	}
	st, err := ParseStatement(env.Payload)
	if err != nil {
		return nil, v, receiptError(CodeReceiptUnverifiable, "the payload is not a qualification statement", err)
	}
	return st, v, nil
}

// VerifyReceipt checks a receipt: signed by one of qualifierKeys
// (receipt_unverifiable otherwise), about the expected package, descriptor
// and artifacts on the expected platform, with a qualified verdict that
// the results bear out (package_unqualified otherwise). Errors are
// *contract.ConfigError with those codes.
func VerifyReceipt(envelope []byte, qualifierKeys []attest.PublicKey, expect Expectation) (*Statement, error) {
	st, _, err := OpenReceipt(envelope, qualifierKeys)
	if err != nil {
		return nil, err
	}
	if problems := Check(st, expect); len(problems) > 0 {
		return st, receiptError(CodePackageUnqualified, strings.Join(problems, "; "), nil)
	}
	return st, nil
}

// Check lists why a statement does not qualify the expected package.
func Check(st *Statement, expect Expectation) []string {
	var out []string
	pred := &st.Predicate
	subj := map[string]map[string]string{}
	for _, s := range st.Subject {
		subj[s.Name] = s.Digest
	}
	want := func(name string, digest map[string]string) {
		got, ok := subj[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("no subject %s", name))
		case !maps.Equal(got, digest):
			out = append(out, fmt.Sprintf("subject %s has digest %v, want %v", name, got, digest))
		}
	}
	if expect.PackageID != "" && (pred.Package.ID != expect.PackageID || (expect.PackageVersion != "" && pred.Package.Version != expect.PackageVersion)) {
		out = append(out, fmt.Sprintf("the receipt is for %s@%s, not %s@%s", pred.Package.ID, pred.Package.Version, expect.PackageID, expect.PackageVersion))
	}
	if expect.PackageSHA256 != "" {
		name := PackageSubject(pred.Package.ID, pred.Package.Version)
		if expect.PackageID != "" {
			name = PackageSubject(expect.PackageID, expect.PackageVersion)
		}
		want(name, map[string]string{"sha256": expect.PackageSHA256})
	}
	if expect.DescriptorSHA256 != "" {
		want(SubjectDescriptor, map[string]string{"sha256": expect.DescriptorSHA256})
	}
	for _, a := range expect.Artifacts {
		want(ArtifactSubject(a), a.Digest)
	}
	switch {
	case pred.Platform == "":
		out = append(out, "the receipt names no platform")
	case expect.Platform != "" && pred.Platform != expect.Platform:
		out = append(out, fmt.Sprintf("the receipt is for platform %s, not %s", pred.Platform, expect.Platform))
	}
	if !pred.Verdict.Qualified {
		out = append(out, "the verdict is not qualified")
	}
	if pred.Verdict.Rule != contract.QualificationRuleV1 {
		out = append(out, fmt.Sprintf("unknown rule %q", pred.Verdict.Rule))
	}
	for _, r := range pred.Results {
		if r.Tier == contract.TierMandatory && r.Verdict != contract.QualificationPass {
			out = append(out, fmt.Sprintf("MANDATORY item %s %s: %s", r.ID, r.Name, r.Verdict))
		}
		if r.Tier == contract.TierMandatory && r.Verdict == contract.QualificationPass && contract.ObservedResult(r.ID) && (r.Observation == nil || !r.Observation.Agrees) {
			out = append(out, fmt.Sprintf("MANDATORY item %s %s passed without an agreeing observation", r.ID, r.Name))
		}
		if r.Tier == contract.TierCapability && r.Verdict == contract.QualificationFail {
			out = append(out, fmt.Sprintf("CAPABILITY item %s %s: fail", r.ID, r.Name))
		}
	}
	if len(pred.Results) == 0 {
		out = append(out, "the receipt has no results")
	}
	return out
}
