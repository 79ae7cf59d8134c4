// Package cli is the cobra command tree of fabric-agent-ctl: serve, and the
// short-lived clients start, invoke, stop, check and status, each printing
// one JSON document and exiting with a documented code. It holds no
// protocol or runtime logic of its own.
package cli
