package qualify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/receipt"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// scriptedPackage reads a package directory as a caller would.
func scriptedPackage(t *testing.T, dir string) Package {
	t.Helper()
	pkg, err := pkgdesc.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PackageFrom(pkg, Platform())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// scriptedDir is the bundled scripted package.
var scriptedDir = filepath.Join("..", "..", "adapters", "scripted", "packages", "fabric.scripted")

// The bundled scripted package qualifies end to end: the suite serves the
// profile's model endpoint itself, every observable item carries a claim
// and an agreeing observation, and the signed receipt verifies against
// the package's digests.
func TestQualifyScriptedPackage(t *testing.T) {
	dir, _ := filepath.Abs(scriptedDir)
	p := scriptedPackage(t, dir)
	// The package's qualification.required raises item 13 (CAPABILITY by
	// default) to MANDATORY.
	p.Required = append(p.Required, contract.QualificationRequire{ID: "13", Tier: contract.TierMandatory})
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
	env, err := receipt.Sign(st, key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := receipt.Expectation{PackageID: p.ID, PackageVersion: p.Version, PackageSHA256: p.SHA256, DescriptorSHA256: p.Descriptor.SHA256, Platform: Platform()}
	if _, err := receipt.VerifyReceipt(data, []attest.PublicKey{key.Public()}, want); err != nil {
		t.Fatal(err)
	}
}

// A package whose descriptor is not the one it names by digest is not
// qualified at all.
func TestQualifyRefusesDescriptorMismatch(t *testing.T) {
	dir, _ := filepath.Abs(scriptedDir)
	p := scriptedPackage(t, dir)
	p.Descriptor.SHA256 = strings.Repeat("0", 64)
	if _, err := Qualify(context.Background(), p, Options{TempDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "the package says") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Qualify(context.Background(), Package{ID: "x"}, Options{}); err == nil || !strings.Contains(err.Error(), "Contract") {
		t.Fatalf("err = %v", err)
	}
}

// A host that claims a clean stop but leaves a child fails qualification:
// the cleanup item keeps its claim (stopped) and the /proc observation
// that disagrees, and the receipt does not verify as qualified.
func TestQualifyClaimedStopWithLeakedChildFails(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		livetest.Missing(t, "setsid", "Debian package util-linux", err)
	}
	dir := escaperPackage(t)
	p := scriptedPackage(t, dir)
	st, err := Qualify(context.Background(), p, Options{TempDir: t.TempDir(), ItemTimeout: 30 * time.Second, Only: []string{"1", "12"}})
	if err != nil {
		t.Fatal(err)
	}
	var cleanup *contract.QualificationResult
	for i, r := range st.Predicate.Results {
		if r.ID == "12" {
			cleanup = &st.Predicate.Results[i]
		}
	}
	switch {
	case cleanup == nil:
		t.Fatal("no cleanup result")
	case cleanup.Verdict != contract.QualificationFail || cleanup.Tier != contract.TierMandatory:
		t.Errorf("cleanup = %s %s, want a MANDATORY fail", cleanup.Tier, cleanup.Verdict)
	case cleanup.Claim == nil || cleanup.Claim.Statement != "stopped":
		t.Errorf("claim = %+v, want the host's stopped", cleanup.Claim)
	case cleanup.Observation == nil || cleanup.Observation.Agrees:
		t.Errorf("observation = %+v, want one that disagrees", cleanup.Observation)
	}
	if st.Predicate.Verdict.Qualified || !slices.Contains(st.Predicate.Summary.FailedTests, "12") {
		t.Errorf("verdict %+v, summary %+v", st.Predicate.Verdict, st.Predicate.Summary)
	}
	k := key(t, "qualifier")
	_, err = receipt.VerifyReceipt(signed(t, st, k), []attest.PublicKey{k.Public()}, receipt.Expectation{PackageSHA256: p.SHA256, Platform: Platform()})
	if code(err) != receipt.CodePackageUnqualified || !strings.Contains(err.Error(), "MANDATORY item 12 cleanup: fail") {
		t.Errorf("verify: %v", err)
	}
}

// escaperPackage makes a package of the leaky host of
// conformance/testdata/escaper: it answers every request correctly and
// claims a clean stop, but leaves a child outside its process group.
func escaperPackage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "conformance", "testdata", "escaper")
	for _, name := range []string{"escaper.fabric-adapter.json", "host.sh"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := conformance.FileSHA256(filepath.Join(dir, "escaper.fabric-adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"conformance.profile.yaml": "adapter_id: test.conformance.escaper\nexpect_output: ok\n",
		contract.PackageDescriptorFile: `{"contract_version": "fabric.package/v1alpha1",
  "package": {"id": "test.escaper", "version": "1", "publisher": "fabric-runtime"},
  "adapter": {"path": "escaper.fabric-adapter.json", "sha256": "` + sum + `"},
  "runtime": {"name": "escaper", "version": "1"},
  "artifacts": {},
  "qualification": {"suite": "fabric-conformance", "profile": "conformance.profile.yaml"}}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
