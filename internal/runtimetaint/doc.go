// Package runtimetaint keeps the taint record of a runtime: the helper
// operations that changed the runtime's state when they must not
// (pkgop's tainted results). The record is a file beside the runtime's
// home, StateDir/<home>.taint.jsonl, one JSON line per taint, only ever
// appended to, so whoever ran the operation (the fabric CLI, another
// process) marks the runtime and the process that owns it sees the mark
// in every handle it builds.
//
// It never clears a mark and never reads anything but that file.
package runtimetaint
