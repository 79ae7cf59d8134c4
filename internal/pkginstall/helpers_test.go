package pkginstall

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
)

// needNPM returns the environment npm runs in for offline tests: its own
// cache, offline, so only the local tarballs of the fixture install.
func needNPM(t testing.TB) []string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		livetest.Missing(t, "npm", "install Node.js with npm", err)
	}
	return append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_offline=true")
}

// tarball writes an npm package tarball (entries under package/) and
// returns its path and sha512 integrity.
func tarball(t testing.TB, dir, name string, files map[string]string) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for p, body := range files {
		mode := int64(0o644)
		if filepath.Ext(p) == ".js" && filepath.Dir(p) == "bin" {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + p, Mode: mode, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(buf.Bytes())
	return p, sri(sum[:])
}

// adapterDoc is the fixture package's adapter descriptor.
const adapterDoc = `{"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "example.fab-tool", "adapter_kind": "process", "runner": {"command": "fab-tool"}}` + "\n"

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fixture is a package directory whose one npm artifact, fab-tool@1.0.0
// with the bin fab-tool, installs from a local tarball.
type fixture struct {
	dir       string // the package directory
	tgz       string
	integrity string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	tgz, integrity := tarball(t, root, "fab-tool-1.0.0.tgz", map[string]string{
		"package.json":    `{"name":"fab-tool","version":"1.0.0","main":"lib/index.js","bin":{"fab-tool":"bin/fab-tool.js"}}`,
		"bin/fab-tool.js": "#!/bin/sh\necho fab-tool\n",
		"lib/index.js":    "module.exports = 42;\n",
	})
	f := &fixture{dir: filepath.Join(root, "pkg"), tgz: tgz, integrity: integrity}
	f.write(t, integrity)
	return f
}

// write writes the package directory with descriptorDigest as the
// artifact's digest in fabric-package.json.
func (f *fixture) write(t testing.TB, descriptorDigest string) {
	t.Helper()
	d := contract.PackageDescriptor{
		ContractVersion: contract.PackageV1Alpha1,
		Package:         contract.PackageIdentity{ID: "example.fab-tool", Version: "1.0.0", Publisher: "tests"},
		Adapter:         contract.PackageAdapter{Path: "fab-tool.fabric-adapter.json", SHA256: hexSHA256(adapterDoc)},
		Runtime:         contract.PackageRuntime{Name: "fab-tool", Version: "1.0.0"},
		Artifacts: map[string][]contract.PackageArtifact{Platform(): {{
			Kind: contract.ArtifactNPM, Name: "fab-tool", Version: "1.0.0", Digest: map[string]string{"sha512": descriptorDigest},
		}}},
		Install: &contract.PackageInstall{Kind: "npm", Lockfile: "npm/package-lock.json", Bins: []string{"node_modules/.bin/fab-tool"}},
	}
	dep := map[string]string{"fab-tool": "file:" + f.tgz}
	lock := map[string]any{"name": "fab-pkg", "lockfileVersion": 3, "requires": true, "packages": map[string]any{
		"":                      map[string]any{"name": "fab-pkg", "dependencies": dep},
		"node_modules/fab-tool": map[string]any{"version": "1.0.0", "resolved": "file:" + f.tgz, "integrity": f.integrity, "bin": map[string]string{"fab-tool": "bin/fab-tool.js"}},
	}}
	writeJSON(t, filepath.Join(f.dir, contract.PackageDescriptorFile), d)
	if err := os.WriteFile(filepath.Join(f.dir, "fab-tool.fabric-adapter.json"), []byte(adapterDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(f.dir, "npm", "package.json"), map[string]any{"name": "fab-pkg", "private": true, "dependencies": dep})
	writeJSON(t, filepath.Join(f.dir, "npm", "package-lock.json"), lock)
}

func (f *fixture) source(t testing.TB) Source {
	t.Helper()
	src, err := LoadSource(os.DirFS(f.dir))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func writeJSON(t testing.TB, p string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies an install directory (files, dirs, symlinks, modes).
func copyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		target := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, info.Mode().Perm())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func codeOf(err error) string {
	var re *contract.RuntimeError
	var ce *contract.ConfigError
	switch {
	case errors.As(err, &re):
		return re.Code
	case errors.As(err, &ce):
		return ce.Code
	}
	return ""
}
