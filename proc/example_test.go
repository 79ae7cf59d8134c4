//go:build linux

package proc_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/fabric-runtime/fabric/proc"
)

func ExampleStart() {
	ctx := context.Background()
	var out bytes.Buffer
	p, err := proc.Start(ctx, proc.Spec{
		Path:   "sh",
		Args:   []string{"-c", "echo hello; exit 3"},
		Stdout: &out,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Stop(ctx) // always: it also ends anything the child left in its group

	<-p.Done()
	info, _ := p.ExitState()
	fmt.Print(out.String())
	fmt.Println(info)
	// Output:
	// hello
	// exit status 3
}

func ExampleProcess_Stop() {
	ctx := context.Background()
	// A harness that starts helpers of its own: Stop ends all of them.
	p, err := proc.Start(ctx, proc.Spec{
		Path:  "sh",
		Args:  []string{"-c", "sleep 60 & sleep 60 & wait"},
		Grace: 500 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.Stop(stopCtx); err != nil {
		fmt.Println(err)
		return
	}
	left, _ := p.GroupPids()
	info, _ := p.ExitState()
	fmt.Println(len(left), info.Signal)
	// Output:
	// 0 SIGTERM
}
