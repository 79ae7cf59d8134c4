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
// cost a host 120 KB of heap and three 64 KiB windows of code, and the
// goroutines serving requests grow their stacks with only adapterkit's
// frames on them (adapterkit's growStack, docs/design/wire.md).
//
// Measured at idle (bench/idle, 1,000 hosts, medians): 6.18 MiB of RSS,
// 0.82 MiB of it the host's own (heap, stacks, written data). Most of it
// is the price of starting this binary: a build of it that only runs its
// package inits and sleeps holds 5.6 MiB (0.74 anonymous), the runtime's
// start and the inits touching 78 of its 64 KiB windows, 22 of them in
// the inits of net/http and what it links (net, crypto, TLS, compression,
// MIME). Serving a start and a turn adds nine windows (five of code:
// wire, proc and adapterkit, the adapter, the syscall package's entry
// points; four of tables: the records and names of the functions its
// goroutines start in, the pc-value tables read when a request's stack
// grows, the type names read to build interface tables) and 0.08 MiB of
// heap and stacks. A host binary that links the four stdio adapters and
// no net/http, serving a stub adapter, idles at 4.3 MiB.
//
// Nothing trims the host once it is ready, on purpose. A host that has
// started and served a turn has run no garbage collection (its heap stays
// far below the first 4 MiB goal), and the runtime's forced collection
// every two minutes only follows an earlier one, so an idle host stays as
// it is. A collection and debug.FreeOSMemory once the host was idle made
// it bigger, 6.30 -> 6.96 MiB (bench/idle, 200 hosts): the collector's
// code and metadata, 0.32 MiB of the binary and 0.35 MiB anonymous,
// outweigh the pages it gives back.
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
