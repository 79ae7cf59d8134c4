// Command fabric-testlog is a tool of Fabric's own test suite (scripts/test):
//
//	go test -json ./... | fabric-testlog render --save FILE
//	fabric-testlog scan --ledger LEDGER PATH...
//
// render prints what plain `go test` would (failing tests' output only)
// and keeps the whole verbose run in FILE; it exits 1 when a package or
// test failed. scan fails when a token of the ledger appears in any file
// under PATH, or when the ledger holds no token (the scan would prove
// nothing). See internal/testsupport/testlog.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fabric-runtime/fabric/internal/testsupport/testlog"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: fabric-testlog render --save FILE | scan --ledger FILE PATH...")
		return 2
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	switch args[0] {
	case "render":
		save := fs.String("save", "", "file that receives the complete `go test -json` stream")
		if fs.Parse(args[1:]) != nil || *save == "" {
			fmt.Fprintln(stderr, "render: --save FILE is required")
			return 2
		}
		f, err := os.OpenFile(*save, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "render:", err)
			return 2
		}
		sum, err := testlog.Render(stdin, stdout, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintln(stderr, "render:", err)
			return 2
		}
		fmt.Fprintf(stdout, "%d packages (%d failed), %d tests (%d failed)\n", sum.Packages, sum.FailedPackages, sum.Tests, sum.FailedTests)
		if sum.Failed() {
			return 1
		}
		return 0
	case "scan":
		ledger := fs.String("ledger", "", "the token ledger (adapterkit/harnessui EnvTokenLedger)")
		if fs.Parse(args[1:]) != nil || *ledger == "" || fs.NArg() == 0 {
			fmt.Fprintln(stderr, "scan: --ledger FILE and at least one PATH are required")
			return 2
		}
		l, err := testlog.ReadLedger(*ledger)
		if err != nil {
			fmt.Fprintln(stderr, "scan:", err)
			return 2
		}
		if l.Len() == 0 {
			fmt.Fprintln(stderr, "scan: the ledger holds no token: no interface started, so the scan would prove nothing")
			return 1
		}
		rep, err := l.Scan(fs.Args()...)
		if err != nil {
			fmt.Fprintln(stderr, "scan:", err)
			return 2
		}
		for _, h := range rep.Hits {
			fmt.Fprintln(stdout, "token leaked:", h)
		}
		fmt.Fprintf(stdout, "%d interface tokens searched for in %d files (%d bytes): %d found\n", l.Len(), rep.Files, rep.Bytes, len(rep.Hits))
		if len(rep.Hits) > 0 {
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "unknown command %q\n", args[0])
	return 2
}
