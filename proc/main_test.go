package proc

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv selects a helper role when the test binary is re-executed as a
// child process (so no test depends on python or other tools).
const helperEnv = "FABRIC_PROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if ran, code := RunSubreaper(); ran {
		os.Exit(code)
	}
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	goleak.VerifyTestMain(m)
}

func runHelper(role string) int {
	switch role {
	case "listen":
		// Listen on a loopback port, print it, and hold it until killed.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
		time.Sleep(10 * time.Minute) // a bound in case the test runner vanished
		return 0
	case "supervisor", "subreaper-host":
		// Start a child the way the core would, print its pid, and exit
		// without stopping it once stdin closes: Pdeathsig must end it. As
		// subreaper-host the child is a subreaper running the script in the
		// last argument, whose output is passed on; the subreaper must take
		// down the script and what it started.
		spec := Spec{Path: "sleep", Args: []string{"60"}}
		if role == "subreaper-host" {
			path, argv, env := SubreaperCommand("sh", []string{"-c", os.Args[len(os.Args)-1]}, "")
			spec = Spec{Path: path, Args: argv, Env: append(os.Environ(), env...), Stdout: os.Stdout, Stderr: os.Stderr}
		}
		p, err := Start(context.Background(), spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Println(p.Pid())
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper role", strconv.Quote(role))
	return 2
}
