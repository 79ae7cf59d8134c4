package harnessui

import (
	"strings"
)

// launcherScript renders a terminal interface's launcher (P4, A3): a POSIX
// shell script that refuses to run unless the runtime's marker exists, then
// executes the adapter's command with its configuration. It holds no
// credential: a token is read from the token file when the launcher runs.
// As Q2 accepts, the launcher checks only the marker, so after L7 it may
// open a session against the old runtime's configuration.
func (s *Set) launcherScript(c *child) []byte {
	l := c.Launcher
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString("# Fabric interface launcher, generated at every start; do not edit.\n")
	b.WriteString("# Adapter " + s.spec.AdapterName + ", runtime " + s.spec.RuntimeID + ", interface " + c.Name + ".\n")
	b.WriteString("# It runs only while the runtime's marker exists.\n")
	b.WriteString("marker=" + shellQuote(markerFile(s.dir, c.Name)) + "\n")
	b.WriteString("if [ ! -e \"$marker\" ]; then\n")
	b.WriteString("\techo " + shellQuote("fabric: interface "+c.Name+" of runtime "+s.spec.RuntimeID+" is not running") + " >&2\n")
	b.WriteString("\texit 1\n")
	b.WriteString("fi\n")
	if l.Dir != "" {
		b.WriteString("cd " + shellQuote(l.Dir) + " || exit 1\n")
	}
	for _, kv := range childEnv(nil, l.Env...) {
		k, v, _ := strings.Cut(kv, "=")
		if _, set := lookupEnv(l.Env, k); !set {
			// QuietEnv (plain values): a default the person's own
			// environment may override.
			b.WriteString(k + "=\"${" + k + "-" + v + "}\"; export " + k + "\n")
			continue
		}
		b.WriteString("export " + k + "=" + shellQuote(v) + "\n")
	}
	if l.TokenEnv != "" {
		b.WriteString(l.TokenEnv + "=\"$(cat " + shellQuote(tokenFile(s.dir, c.Name)) + ")\" || exit 1\n")
		b.WriteString("export " + l.TokenEnv + "\n")
	}
	b.WriteString("exec")
	for _, a := range l.Argv {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString(" \"$@\"\n")
	return []byte(b.String())
}

// shellQuote quotes s for a POSIX shell: single quotes, with each single
// quote written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
