package cli_test

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	agentctlcli "github.com/fabric-runtime/fabric/internal/agentctl/cli"
	"github.com/fabric-runtime/fabric/internal/cli"
	"github.com/fabric-runtime/fabric/internal/pkgop"
	"github.com/fabric-runtime/fabric/internal/supervisor/servecmd"
)

// TestMain doubles as the programs the scripts run: fabric, fabric-serve
// (which fabric serve, and so deploy apply, replaces itself with) and
// fabric-agent-ctl; and as the package-operation sandbox and the host of
// bundled adapters that they re-execute. It is in the external test
// package because fabric-serve's body imports this package.
func TestMain(m *testing.M) {
	if served, code := pkgop.MaybeServeSandbox(); served {
		os.Exit(code)
	}
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	testscript.Main(m, map[string]func(){
		"fabric": func() {
			os.Exit(cli.Run(context.Background(), os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
		},
		cli.ServeBinary:    func() { os.Exit(servecmd.Main()) },
		"fabric-agent-ctl": func() { os.Exit(agentctlcli.Main()) },
	})
}
