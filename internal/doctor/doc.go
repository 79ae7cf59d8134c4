// Package doctor runs preflight checks for a config: descriptor resolution,
// every planning finding (kept as a failed check, never thrown), required
// binaries and their versions, required environment variable names,
// required files, and probes the adapter declares.
//
// Doctor reports whether an environment variable is present and never its
// value. It never starts the adapter or talks to a model.
package doctor
