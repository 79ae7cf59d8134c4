package proc

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv selects a helper role when the test binary is re-executed as a
// child process (so no test depends on python or other tools).
const helperEnv = "FABRIC_PROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	goleak.VerifyTestMain(m)
}

// serveModeEnv tells the "subreaper" helper how its serve function ends:
// "wait" when its script exits (with the script's code), "term" on
// SIGTERM (with 143, leaving the script running), "hang" never.
const serveModeEnv = "FABRIC_PROC_TEST_SERVE"

// serveScript is the "subreaper" helper's serve function: it prints its
// pid, then runs script in sh (stdout passed on) and ends as mode says.
func serveScript(mode, script string) int {
	fmt.Println(os.Getpid())
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	switch mode {
	case "wait":
		_ = cmd.Wait()
		return cmd.ProcessState.ExitCode()
	case "term":
		<-term
		return 143
	}
	time.Sleep(10 * time.Minute) // a bound in case the test runner vanished
	return 0
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
	case "supervisor", "subreaper-caller":
		// Start a child the way the core would, print its pid, and exit
		// without stopping it once stdin closes: Pdeathsig must end it. As
		// subreaper-caller the child is this binary as a "subreaper"
		// helper that hangs, running the script in the last argument,
		// whose output is passed on; it must take down the script and what
		// it started once its caller is gone.
		spec := Spec{Path: "sleep", Args: []string{"60"}}
		if role == "subreaper-caller" {
			exe, _ := os.Executable()
			spec = Spec{Path: exe, Args: []string{"-test.run=^$", os.Args[len(os.Args)-1]},
				Env:    append(os.Environ(), helperEnv+"=subreaper", serveModeEnv+"=hang"),
				Stdout: os.Stdout, Stderr: os.Stderr}
		}
		p, err := Start(context.Background(), spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Println(p.Pid())
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		return 0
	case "subreaper":
		return RunAsSubreaper(func() int { return serveScript(os.Getenv(serveModeEnv), os.Args[len(os.Args)-1]) })
	}
	fmt.Fprintln(os.Stderr, "unknown helper role", strconv.Quote(role))
	return 2
}
