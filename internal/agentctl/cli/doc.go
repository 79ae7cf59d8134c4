// Package cli is the cobra command tree of fabric-agent-ctl: the short-lived
// clients start, invoke, stop, check, status and decide, each printing one
// JSON document and exiting with a documented code, and serve's command
// line, which fabric-agent-ctl hands to fabric-agent-ctl-serve (Main) and
// fabric-agent-ctl-serve runs (MainServe, with package servecmd). It holds
// no protocol or runtime logic of its own, and links no runtime: platforms
// exec the clients for every probe.
package cli
