// Command fabric-host hosts one bundled Go adapter for a Fabric runtime. The
// core starts it with FABRIC_BUNDLED_ADAPTER set; it links only the adapters
// and adapterkit, so it starts faster and uses less memory than re-executing
// the full fabric binary (which can host them too).
//
// Build it with CGO_ENABLED=0 (bench/run.sh does): it then links statically,
// so a host start maps no ld.so and libc and creates its threads without
// pthreads; measured with 1,000 idle hosts, 9.2 MiB of RSS each becomes 7.7,
// and a start costs about a tenth less CPU. The only package it links that
// uses cgo is net, whose pure Go resolver Go already prefers on Linux.
//
// Most of an idle host's RSS is the binary's shared pages, and what counts
// is which 64 KiB stretches of it a host touches: on a page fault the
// kernel maps the up to 16 neighbouring pages already in the page cache
// (fault-around), so each touched page brings its 64 KiB window, whether
// one host runs or a thousand. Measured with bench/idle -hold and
// /proc/<pid>/pagemap: a host touches nearly all of .text and .rodata,
// mostly through the Go runtime's start (itabs, pc tables) and the
// package inits of what it links: net/http and crypto/tls (the HTTP
// adapters need them) run a dozen inits in code no idle host uses. So no
// package this binary links may do work at init (internal/lazy), and
// what an idle host runs after them stays off reflection: the start
// payload, a scripted runtime's settings and the start's answer are
// decoded and encoded without encoding/json (internal/hostproto), which
// cost a host 120 KB of heap and three 64 KiB windows of code. A host
// binary that links the four stdio adapters and no net/http, serving a
// stub adapter, idles at 4.3 MiB of RSS where this one idles at 6.1
// (bench/idle, 1,000 hosts).
package main

import (
	"fmt"
	"os"

	"github.com/fabric-runtime/fabric/adapters/bundled"
)

func main() {
	if served, code := bundled.ServeHost(); served {
		os.Exit(code)
	}
	fmt.Fprintln(os.Stderr, "fabric-host: hosts a bundled adapter for a Fabric runtime; it is started by Fabric, not by hand")
	os.Exit(2)
}
