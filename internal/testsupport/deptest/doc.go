// Package deptest checks, from a test, what a program links and what its
// packages do before main, in the style of tailscale's tstest/deptest:
// BadDeps walks the transitive dependencies (`go list -deps`) of a package
// and fails on any it must not link; InitWork builds a command, runs it
// once with GODEBUG=inittrace=1 and fails on any package of this module
// that allocates at init beyond a small allowance (a regexp compiled, a
// descriptor parsed). It must never time anything: speed lives in
// benchmarks, and allocation counts are deterministic.
package deptest
