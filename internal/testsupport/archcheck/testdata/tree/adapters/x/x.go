// Package x is an adapter's own tree: names are free here.
package x

const id = "codex"
