package pkginstall

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// BenchmarkVerify is the per-start cost of the pre-exec check: Verify of
// the offline fixture install, and of the Codex package installed from
// the npm registry (testdata/codex), beside a full re-hash of that tree
// (treemanifest.Take), the check Verify avoids.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	b.Run("fixture", func(b *testing.B) {
		in, err := Install(ctx, newFixture(b).source(b), Options{DataDir: b.TempDir(), Env: needNPM(b)})
		if err != nil {
			b.Fatal(err)
		}
		benchVerify(b, in)
	})
	b.Run("codex", func(b *testing.B) {
		livetest.Short(b, "npm and the npm registry (it installs @openai/codex)")
		if _, err := os.Stat(codexPackage); err != nil {
			b.Fatal(err)
		}
		src, err := LoadSource(os.DirFS(codexPackage))
		if err != nil {
			b.Fatal(err)
		}
		needNPM(b)
		// npm with the user's cache, online.
		in, err := Install(ctx, src, Options{DataDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("verify", func(b *testing.B) { benchVerify(b, in) })
		b.Run("full-tree-hash", func(b *testing.B) {
			for b.Loop() {
				m, err := treemanifest.Take(in.Root, treemanifest.Options{Ignore: []string{RecordFile}, NoIgnoreFile: true})
				if err != nil || m.Digest() != in.Record.Manifest.Digest {
					b.Fatalf("manifest %v: %v", m.Digest(), err)
				}
			}
		})
	})
}

func benchVerify(b *testing.B, in *Installed) {
	for b.Loop() {
		if err := Verify(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(in.Record.Manifest.Entries)), "entries")
}

// codexPackage is the built-in Codex package.
var codexPackage = filepath.Join("..", "..", "adapters", "codex", "packages", "nvidia.fabric.codex")
