package pkgdesc

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fabric-runtime/fabric/contract"
)

const adapterJSON = `{"contract_version":"fabric.adapter/v1alpha2","adapter_id":"example.tool","adapter_kind":"process"}` + "\n"

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// validDescriptor is a package descriptor every check accepts; tests
// replace parts of it.
func validDescriptor() string {
	return `{
  "contract_version": "fabric.package/v1alpha1",
  "package": {"id": "example.tool", "version": "1.2.3", "publisher": "example"},
  "adapter": {"path": "example.fabric-adapter.json", "sha256": "` + sha(adapterJSON) + `"},
  "runtime": {"name": "example-tool", "version": "1.2.3"},
  "artifacts": {
    "linux-x86_64": [
      {"kind": "npm", "name": "example-tool", "version": "1.2.3",
       "digest": {"sha512": "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=="}}
    ]
  },
  "install": {"kind": "npm", "lockfile": "npm/package-lock.json", "bins": ["node_modules/.bin/example"]},
  "state_paths": [{"id": "config", "path": ".example/config.json", "class": "config"}],
  "operations": [
    {"id": "show", "mode": "read", "argv": ["example", "config", "show"]},
    {"id": "set", "mode": "configure", "argv": ["example", "config", "set"], "writes": ["config"]}
  ],
  "qualification": {"suite": "fabric-conformance", "profile": "conformance.profile.yaml"}
}
`
}

// writePackage writes a package directory holding descriptor and the
// files it names.
func writePackage(t *testing.T, descriptor string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		contract.PackageDescriptorFile: descriptor,
		"example.fabric-adapter.json":  adapterJSON,
		"conformance.profile.yaml":     "adapter_id: example.tool\n",
		"npm/package.json":             `{"dependencies":{"example-tool":"1.2.3"}}`,
		"npm/package-lock.json":        `{"lockfileVersion":3}`,
	}
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadValid(t *testing.T) {
	dir := writePackage(t, validDescriptor())
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID() != "example.tool" || p.Version() != "1.2.3" {
		t.Errorf("id@version = %s@%s", p.ID(), p.Version())
	}
	if p.AdapterSHA256 != sha(adapterJSON) || p.AdapterPath != filepath.Join(dir, "example.fabric-adapter.json") {
		t.Errorf("adapter = %s %s", p.AdapterPath, p.AdapterSHA256)
	}
	if !strings.HasPrefix(p.Digest(), "fm1:") {
		t.Errorf("digest %q", p.Digest())
	}
	if p.DescriptorSHA256 != sha(validDescriptor()) {
		t.Error("descriptor sha256 is not the file's")
	}
}

// finding is what a test expects: a code at a path (and a line when > 0).
type finding struct {
	code, path string
	line       int
}

func TestLoadFindings(t *testing.T) {
	cases := []struct {
		name string
		edit func(string) string
		want []finding
	}{
		{"unknown top-level field", func(s string) string {
			return strings.Replace(s, `"runtime":`, `"surprise": 1, "runtime":`, 1)
		}, []finding{{"unknown_field", "surprise", 5}}},
		{"duplicate key", func(s string) string {
			return strings.Replace(s, `"publisher": "example"`, `"publisher": "example", "id": "again"`, 1)
		}, []finding{{"duplicate_key", "package.id", 3}}},
		{"missing artifacts for a listed platform", func(s string) string {
			return strings.Replace(s, `"artifacts": {`, `"artifacts": {"darwin-aarch64": [],`, 1)
		}, []finding{{CodeNoArtifacts, "artifacts.darwin-aarch64", 6}}},
		{"sk- key in a value", func(s string) string {
			return strings.Replace(s, `"publisher": "example"`, `"publisher": "sk-proj-abcdefghijklmnopqrstuvwx"`, 1)
		}, []finding{{CodeCredential, "package.publisher", 3}}},
		{"PEM block", func(s string) string {
			return strings.Replace(s, `"config", "show"]`, `"-----BEGIN PRIVATE KEY-----\nMIIE"]`, 1)
		}, []finding{{CodeCredential, "operations[0].argv[1]", 0}}},
		{"JWT", func(s string) string {
			return strings.Replace(s, `"name": "example-tool"`, `"name": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"`, 1)
		}, []finding{{CodeCredential, "runtime.name", 0}}},
		{"high-entropy token", func(s string) string {
			return strings.Replace(s, `".example/config.json"`, `"Zx8Qw3Lp0Rt7Yb2Nc5Vm9Ks4Hd1Gf6Ja"`, 1)
		}, []finding{{CodeCredential, "state_paths[0].path", 0}}},
		{"secret-named key with a value", func(s string) string {
			return strings.Replace(s, `"runtime": {`, `"runtime": {"api_key": "x", `, 1)
		}, []finding{{CodeCredential, "runtime.api_key", 5}}},
		{"wrong contract version", func(s string) string {
			return strings.Replace(s, "fabric.package/v1alpha1", "fabric.package/v9", 1)
		}, []finding{{CodeContractVersion, "contract_version", 2}}},
		{"schema: bad id", func(s string) string {
			return strings.Replace(s, `"id": "example.tool"`, `"id": "Example Tool"`, 1)
		}, []finding{{CodeSchema, "package.id", 3}}},
		{"schema: bad mode", func(s string) string {
			return strings.Replace(s, `"mode": "read"`, `"mode": "write"`, 1)
		}, []finding{{CodeSchema, "operations[0].mode", 0}}},
		{"adapter digest", func(s string) string {
			return strings.Replace(s, sha(adapterJSON), sha("other"), 1)
		}, []finding{{CodeAdapterDigest, "adapter.sha256", 4}}},
		{"adapter outside the package", func(s string) string {
			return strings.Replace(s, `"path": "example.fabric-adapter.json"`, `"path": "../example.fabric-adapter.json"`, 1)
		}, []finding{{CodeAdapterMissing, "adapter.path", 4}}},
		{"adapter missing", func(s string) string {
			return strings.Replace(s, `"path": "example.fabric-adapter.json"`, `"path": "nope.json"`, 1)
		}, []finding{{CodeAdapterMissing, "adapter.path", 4}}},
		{"artifact digest malformed", func(s string) string {
			return strings.Replace(s, `NqRA==`, `NqRA`, 1)
		}, []finding{{CodeArtifactDigest, "artifacts.linux-x86_64[0].digest.sha512", 0}}},
		{"artifact digest algorithm", func(s string) string {
			return strings.Replace(s, `"sha512": "sha512-`, `"md5": "sha512-`, 1)
		}, []finding{{CodeArtifactDigest, "artifacts.linux-x86_64[0].digest.md5", 0}}},
		{"write of an undeclared state path", func(s string) string {
			return strings.Replace(s, `"writes": ["config"]`, `"writes": ["config", "sessions"]`, 1)
		}, []finding{{CodeUndeclaredWrite, "operations[1].writes[1]", 0}}},
		{"read op with writes", func(s string) string {
			return strings.Replace(s, `"show"]}`, `"show"], "writes": ["config"]}`, 1)
		}, []finding{{CodeReadWrites, "operations[0].writes", 0}}},
		{"profile missing", func(s string) string {
			return strings.Replace(s, `"profile": "conformance.profile.yaml"`, `"profile": "nope.yaml"`, 1)
		}, []finding{{CodeProfileMissing, "qualification.profile", 0}}},
		{"lockfile missing", func(s string) string {
			return strings.Replace(s, `"lockfile": "npm/package-lock.json"`, `"lockfile": "npm/nope.json"`, 1)
		}, []finding{{CodeLockfileMissing, "install.lockfile", 0}}},
		{"install.node not an artifact", func(s string) string {
			return strings.Replace(s, `"kind": "npm", "lockfile"`, `"kind": "npm", "node": "node-linux-x64", "lockfile"`, 1)
		}, []finding{{"invalid_value", "install.node", 0}}},
		{"null", func(s string) string {
			return strings.Replace(s, `"publisher": "example"`, `"publisher": null`, 1)
		}, []finding{{"invalid_type", "package.publisher", 3}}},
		{"syntax", func(s string) string { return s[:len(s)-4] }, []finding{{"invalid_syntax", "", 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writePackage(t, tc.edit(validDescriptor()))
			_, err := Load(dir)
			if err == nil {
				t.Fatal("loaded")
			}
			var ce *contract.ConfigError
			if !errors.As(err, &ce) || ce.Code != CodeInvalid {
				t.Fatalf("error %v is not a %s ConfigError", err, CodeInvalid)
			}
			got := FindingsOf(err)
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(f *Finding) bool {
					return f.Code == w.code && f.Path == w.path && (w.line == 0 || f.Line == w.line) &&
						f.File == filepath.Join(dir, contract.PackageDescriptorFile)
				}) {
					t.Errorf("no finding %s at %s (line %d) in:\n%v", w.code, w.path, w.line, got)
				}
			}
			if strings.Contains(err.Error(), "abcdefghijklmnop") || strings.Contains(err.Error(), "MIIE") || strings.Contains(err.Error(), "Zx8Qw3") {
				t.Errorf("a value leaked into the error: %v", err)
			}
		})
	}
}

func TestLoadFSDigestEqualsDisk(t *testing.T) {
	dir := writePackage(t, validDescriptor())
	if err := os.WriteFile(filepath.Join(dir, ".fabric-package-ignore"), []byte("scratch/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "scratch"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scratch/x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "npm"), 0o700); err != nil { // a mode embedding drops
		t.Fatal(err)
	}
	disk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	mapfs := fstest.MapFS{}
	for _, e := range disk.Manifest().Entries {
		if e.Type == "file" {
			b, err := os.ReadFile(filepath.Join(dir, e.Path))
			if err != nil {
				t.Fatal(err)
			}
			mapfs[e.Path] = &fstest.MapFile{Data: b, Mode: 0o444}
		}
	}
	mapfs[".fabric-package-ignore"] = &fstest.MapFile{Data: []byte("scratch/\n")}
	embedded, err := LoadFS(mapfs)
	if err != nil {
		t.Fatal(err)
	}
	if embedded.Digest() != disk.Digest() {
		t.Errorf("embedded %s != disk %s", embedded.Digest(), disk.Digest())
	}
	if embedded.Dir != "" || embedded.AdapterPath != "example.fabric-adapter.json" {
		t.Errorf("embedded package: dir %q adapter %q", embedded.Dir, embedded.AdapterPath)
	}
	// Any edit changes the digest.
	if err := os.WriteFile(filepath.Join(dir, "conformance.profile.yaml"), []byte("adapter_id: other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edited, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if edited.Digest() == disk.Digest() {
		t.Error("editing a file changed nothing")
	}
}

func TestLoadNotADirectory(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope")); err == nil || FindingsOf(err) == nil {
		t.Errorf("missing dir: %v", err)
	}
}

// A built-in adapter's package has no artifacts and no install.
func TestLoadBuiltinWithoutArtifacts(t *testing.T) {
	d := validDescriptor()
	i, j := strings.Index(d, `  "artifacts": {`), strings.Index(d, `  "state_paths"`)
	d = d[:i] + `  "artifacts": {},` + "\n" + d[j:]
	if _, err := Load(writePackage(t, d)); err != nil {
		t.Fatal(err)
	}
}

func TestSecretLike(t *testing.T) {
	for _, s := range []string{
		"nvidia.fabric.acp.claude-agent-acp", "@zed-industries/codex-acp", "node_modules/.bin/claude-agent-acp",
		"packages/nvidia.fabric.acp.claude-agent-acp/claude-agent-acp.fabric-adapter.json",
		"2026.9.6", "fabric.host/v2", "OPENAI_API_KEY", "https://github.com/fabric-runtime/fabric",
		"@anthropic-ai/claude-code-linux-x64", "@teddyzhu/clipboard-linux-x64-gnu", "FABRIC_CONFORMANCE_API_KEY_FOR_TESTS",
	} {
		if why := secretLike(s); why != "" {
			t.Errorf("%q flagged as %s", s, why)
		}
	}
	for _, s := range []string{
		"0123456789abcdef0123456789abcdef01234567", "ghp_Zx8Qw3Lp0Rt7Yb2Nc5Vm9Ks4Hd1Gf6Ja0", "xoxb-Zx8Qw3Lp0Rt7Yb2Nc5Vm9Ks4Hd1Gf6Ja",
	} {
		if secretLike(s) == "" {
			t.Errorf("%q not flagged", s)
		}
	}
}

func FuzzLoadDescriptor(f *testing.F) {
	f.Add([]byte(validDescriptor()))
	f.Add([]byte(`{"contract_version":"fabric.package/v1alpha1"}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			contract.PackageDescriptorFile: &fstest.MapFile{Data: data},
			"example.fabric-adapter.json":  &fstest.MapFile{Data: []byte(adapterJSON)},
			"conformance.profile.yaml":     &fstest.MapFile{Data: []byte("x\n")},
			"npm/package-lock.json":        &fstest.MapFile{Data: []byte("{}")},
		}
		p, err := LoadFS(fsys)
		if (p == nil) == (err == nil) {
			t.Fatalf("package %v and error %v", p, err)
		}
		if err != nil {
			if len(FindingsOf(err)) == 0 {
				t.Fatalf("an error without findings: %v", err)
			}
			return
		}
		if p.Descriptor.ContractVersion != contract.PackageV1Alpha1 || !strings.HasPrefix(p.Digest(), "fm1:") {
			t.Fatalf("loaded %+v", p.Descriptor)
		}
	})
}

func TestCheckLockfile(t *testing.T) {
	lock := func(integrity string) string {
		return `{"lockfileVersion":3,"packages":{"":{"name":"x"},"node_modules/example-tool":{"version":"1.2.3","integrity":"` + integrity + `"}}}`
	}
	const pinned = "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=="
	for _, tc := range []struct {
		name, lockfile string
		want           int
	}{
		{"same integrity", lock(pinned), 0},
		{"other integrity", lock("sha512-" + strings.Repeat("A", 86) + "=="), 1},
		{"not in the lockfile", `{"lockfileVersion":3,"packages":{}}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writePackage(t, validDescriptor())
			if err := os.WriteFile(filepath.Join(dir, "npm/package-lock.json"), []byte(tc.lockfile), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := CheckLockfile(p)
			if len(got) != tc.want {
				t.Fatalf("findings %v, want %d", got, tc.want)
			}
			for _, f := range got {
				if f.Code != CodeLockfileMismatch || !strings.HasPrefix(f.Path, "artifacts.linux-x86_64[0]") {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
}
