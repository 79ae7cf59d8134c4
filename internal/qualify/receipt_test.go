package qualify

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/receipt"
)

func key(t testing.TB, role string) *attest.PrivateKey {
	t.Helper()
	k, err := attest.GenerateKey(role)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func signed(t testing.TB, st *receipt.Statement, k *attest.PrivateKey) []byte {
	t.Helper()
	env, err := receipt.Sign(st, k)
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func goldenExpectation() receipt.Expectation {
	p := goldenPackage()
	return receipt.Expectation{PackageID: p.ID, PackageVersion: p.Version, PackageSHA256: p.SHA256, DescriptorSHA256: p.Descriptor.SHA256,
		Artifacts: p.Artifacts, Platform: "linux-x86_64"}
}

func code(err error) string {
	var ce *contract.ConfigError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

func TestVerifyReceipt(t *testing.T) {
	qualifier, other := key(t, "qualifier"), key(t, "publisher")
	good := signed(t, goldenStatement(), qualifier)
	restate := func(f func(*receipt.Statement)) []byte {
		st := goldenStatement()
		f(st)
		return signed(t, st, qualifier)
	}
	flip := func(b []byte, at string) []byte {
		env, err := attest.ParseEnvelope(b)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(env.Payload, []byte(at))
		env.Payload = bytes.Clone(env.Payload)
		env.Payload[i] ^= 1
		out, _ := env.Marshal()
		return out
	}
	tests := []struct {
		name    string
		receipt []byte
		keys    []attest.PublicKey
		expect  func(*receipt.Expectation)
		code    string
		in      string
	}{
		{name: "valid", receipt: good},
		{name: "valid, a wrong keyid hint", receipt: func() []byte {
			env, _ := attest.ParseEnvelope(good)
			env.Signatures[0].KeyID = "not-the-key"
			b, _ := env.Marshal()
			return b
		}()},
		{name: "flipped payload byte", receipt: flip(good, "linux-x86_64"), code: receipt.CodeReceiptUnverifiable, in: "no valid signature"},
		{name: "signer outside the qualifier role", receipt: signed(t, goldenStatement(), other), code: receipt.CodeReceiptUnverifiable},
		{name: "no qualifier key at all", receipt: good, keys: []attest.PublicKey{}, code: receipt.CodeReceiptUnverifiable},
		{name: "not an envelope", receipt: []byte(`{"payload": 1}`), code: receipt.CodeReceiptUnverifiable, in: "not a DSSE envelope"},
		{name: "not a qualification statement", code: receipt.CodeReceiptUnverifiable, in: "predicateType",
			receipt: restate(func(st *receipt.Statement) { st.PredicateType = "https://slsa.dev/provenance/v1" })},
		{name: "another package digest", receipt: good, code: receipt.CodePackageUnqualified, in: "subject package:fabric.scripted@1",
			expect: func(e *receipt.Expectation) { e.PackageSHA256 = strings.Repeat("b", 64) }},
		{name: "another descriptor digest", receipt: good, code: receipt.CodePackageUnqualified, in: "adapter-descriptor",
			expect: func(e *receipt.Expectation) { e.DescriptorSHA256 = strings.Repeat("b", 64) }},
		{name: "another artifact digest", receipt: good, code: receipt.CodePackageUnqualified, in: "npm:@scope/tool@1.2.3",
			expect: func(e *receipt.Expectation) {
				e.Artifacts = []contract.PackageArtifact{{Kind: "npm", Name: "@scope/tool", Version: "1.2.3", Digest: map[string]string{"sha512": "b3RoZXI="}}}
			}},
		{name: "another package", receipt: good, code: receipt.CodePackageUnqualified, in: "not other.pkg@1",
			expect: func(e *receipt.Expectation) { e.PackageID = "other.pkg" }},
		{name: "another platform", receipt: good, code: receipt.CodePackageUnqualified, in: "not darwin-aarch64",
			expect: func(e *receipt.Expectation) { e.Platform = "darwin-aarch64" }},
		{name: "no platform", code: receipt.CodePackageUnqualified, in: "no platform",
			receipt: restate(func(st *receipt.Statement) { st.Predicate.Platform = "" })},
		{name: "mandatory not_tested under a qualified verdict", code: receipt.CodePackageUnqualified, in: "MANDATORY item 12 cleanup: not_tested",
			receipt: restate(func(st *receipt.Statement) { st.Predicate.Results[11].Verdict = contract.QualificationNotTested })},
		{name: "mandatory pass without observation", code: receipt.CodePackageUnqualified, in: "without an agreeing observation",
			receipt: restate(func(st *receipt.Statement) { st.Predicate.Results[11].Observation = nil })},
		{name: "capability fail", code: receipt.CodePackageUnqualified, in: "CAPABILITY item 8",
			receipt: restate(func(st *receipt.Statement) { st.Predicate.Results[7].Verdict = contract.QualificationFail })},
		{name: "unqualified verdict", code: receipt.CodePackageUnqualified, in: "not qualified",
			receipt: restate(func(st *receipt.Statement) { st.Predicate.Verdict.Qualified = false })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := tt.keys
			if keys == nil {
				keys = []attest.PublicKey{qualifier.Public()}
			}
			e := goldenExpectation()
			if tt.expect != nil {
				tt.expect(&e)
			}
			st, err := receipt.VerifyReceipt(tt.receipt, keys, e)
			if tt.code == "" {
				if err != nil || st == nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if code(err) != tt.code || !strings.Contains(err.Error(), tt.in) {
				t.Fatalf("err = %v, want %s naming %q", err, tt.code, tt.in)
			}
		})
	}
}

func TestReceiptName(t *testing.T) {
	n := receipt.ReceiptName([]byte("x"))
	if n != "sha256-2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881.intoto.json" {
		t.Errorf("name %s", n)
	}
}

func TestSignPayloadIsTheStatement(t *testing.T) {
	k := key(t, "qualifier")
	env, err := receipt.Sign(goldenStatement(), k)
	if err != nil {
		t.Fatal(err)
	}
	if env.PayloadType != contract.InTotoPayloadType {
		t.Errorf("payload type %s", env.PayloadType)
	}
	var st receipt.Statement
	if err := json.Unmarshal(env.Payload, &st); err != nil || st.Type != contract.InTotoStatementV1 {
		t.Errorf("payload %s: %v", env.Payload, err)
	}
	if _, err := receipt.Sign(nil, k); err == nil {
		t.Error("signed a nil statement")
	}
}
