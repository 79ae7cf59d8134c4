package qualify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// scriptedPackage reads testdata/scripted as a caller would.
func scriptedPackage(t *testing.T, dir string) Package {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, contract.PackageDescriptorFile))
	if err != nil {
		t.Fatal(err)
	}
	var d contract.PackageDescriptor
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	m, err := treemanifest.Take(dir, treemanifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Package{ID: d.Package.ID, Version: d.Package.Version, Contract: d.ContractVersion, SHA256: m.SHA256(), Dir: dir,
		Descriptor: d.Adapter, Artifacts: d.Artifacts[Platform()], Profile: d.Qualification.Profile, Required: d.Qualification.Required}
}

// The scripted test package qualifies end to end: the suite serves the
// profile's model endpoint itself, every observable item carries a claim
// and an agreeing observation, and the signed receipt verifies against
// the package's digests.
func TestQualifyScriptedPackage(t *testing.T) {
	dir, _ := filepath.Abs(filepath.Join("testdata", "scripted"))
	p := scriptedPackage(t, dir)
	st, err := Qualify(context.Background(), p, Options{TempDir: t.TempDir(), ItemTimeout: 30 * time.Second,
		Env: append(os.Environ(), "GORACE=atexit_sleep_ms=0")})
	if err != nil {
		t.Fatal(err)
	}
	pred := st.Predicate
	for _, r := range pred.Results {
		t.Logf("%-3s %-18s %-10s %-10s %s", r.ID, r.Name, r.Tier, r.Verdict, r.Detail)
	}
	if !pred.Verdict.Qualified || pred.Summary.Result != "PASSED" {
		t.Fatalf("verdict %+v, summary %+v", pred.Verdict, pred.Summary)
	}
	if !strings.HasPrefix(pred.Environment.ModelEndpoint, "modelstub script sha256:") {
		t.Errorf("model endpoint %q: the suite did not serve the profile's modelstub", pred.Environment.ModelEndpoint)
	}
	for _, r := range pred.Results {
		if r.ID == "13" && r.Tier != contract.TierMandatory {
			t.Errorf("item 13 tier %s, want the package's MANDATORY", r.Tier)
		}
		if conformance.Observable(r.ID) && (r.Claim == nil || r.Observation == nil || !r.Observation.Agrees || r.EvidenceLevel != contract.EvidenceObserved) {
			t.Errorf("item %s: claim %+v observation %+v", r.ID, r.Claim, r.Observation)
		}
	}
	key, err := attest.GenerateKey("qualifier")
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign(st, key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := Expectation{PackageID: p.ID, PackageVersion: p.Version, PackageSHA256: p.SHA256, DescriptorSHA256: p.Descriptor.SHA256, Platform: Platform()}
	if _, err := VerifyReceipt(data, []attest.PublicKey{key.Public()}, want); err != nil {
		t.Fatal(err)
	}
}

// A package whose descriptor is not the one it names by digest is not
// qualified at all.
func TestQualifyRefusesDescriptorMismatch(t *testing.T) {
	dir, _ := filepath.Abs(filepath.Join("testdata", "scripted"))
	p := scriptedPackage(t, dir)
	p.Descriptor.SHA256 = strings.Repeat("0", 64)
	if _, err := Qualify(context.Background(), p, Options{TempDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "the package says") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Qualify(context.Background(), Package{ID: "x"}, Options{}); err == nil || !strings.Contains(err.Error(), "Contract") {
		t.Fatalf("err = %v", err)
	}
}
