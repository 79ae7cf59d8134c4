package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fabric-runtime/fabric/internal/attest"
)

// TestPackagesQualifyScripts runs testdata/packages/*.txtar with two
// commands of their own: genkey (a key pair made in the test) and tamper
// (one flipped payload byte of a receipt).
func TestPackagesQualifyScripts(t *testing.T) {
	root := repoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "packages"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"genkey": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: genkey ROLE PRIVATE PUBLIC")
				}
				k, err := attest.GenerateKey(args[0])
				ts.Check(err)
				ts.Check(attest.WritePrivateKey(ts.MkAbs(args[1]), k))
				pub, err := attest.MarshalPublicKey(k.Public(), args[0])
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[2]), pub, 0o644))
			},
			"tamper": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: tamper RECEIPT FROM TO (replace FROM by TO in the payload)")
				}
				env, err := attest.ParseEnvelope([]byte(ts.ReadFile(args[0])))
				ts.Check(err)
				if !bytes.Contains(env.Payload, []byte(args[1])) {
					ts.Fatalf("the payload has no %q", args[1])
				}
				env.Payload = bytes.Replace(env.Payload, []byte(args[1]), []byte(args[2]), 1)
				b, err := env.Marshal()
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
			},
		},
	})
}
