// Package conformance is the automated adapter conformance suite: it drives
// one adapter, named by its descriptor, through the upstream conformance
// matrix (discovery, planning and rejection, doctor, lifecycle, failure
// modes, cleanup, isolation and secret redaction) using only the public
// SDK and contract, and returns one verdict per item.
//
// A Profile says how to exercise the adapter: a base config and optional
// overlays that provoke each failure. Built-in profiles cover the bundled
// adapters; LoadProfile reads one for any other adapter. Items whose
// prerequisites a profile does not provide are skipped with a reason, never
// passed.
//
// The suite never names an adapter in its logic (only BundledProfile does),
// never touches processes it did not cause, and leaves no runtime, process
// or directory behind: leaked host processes are reported and then killed.
package conformance
