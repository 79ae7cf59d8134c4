package harnessui

import "strings"

// quietEnv switches off, by convention, the update checks, automatic
// updates and telemetry that tools make on their own (C3). Harness-specific
// switches (OPENCLAW_NO_AUTO_UPDATE, ...) come from the adapter.
var quietEnv = []string{
	"DO_NOT_TRACK=1",                   // consoledonottrack.com convention
	"DISABLE_TELEMETRY=1",              // widely read generic switch
	"DISABLE_AUTOUPDATER=1",            // CLIs that update themselves
	"NO_UPDATE_NOTIFIER=1",             // npm's update-notifier library
	"NPM_CONFIG_UPDATE_NOTIFIER=false", // npm itself
	"PIP_DISABLE_PIP_VERSION_CHECK=1",  // pip's version check
	"HF_HUB_DISABLE_TELEMETRY=1",       // Hugging Face Hub clients
	"NEXT_TELEMETRY_DISABLED=1",        // Next.js frontends
}

// QuietEnv returns the generic "KEY=value" switches Start adds to every
// child's environment and launcher, unless the child's environment sets
// the key already (C3: off "unless configured").
func QuietEnv() []string { return append([]string(nil), quietEnv...) }

// childEnv builds a child's environment: base (the host's when nil), the
// QuietEnv defaults for keys base does not set, then extra, which wins.
func childEnv(base []string, extra ...string) []string {
	env := append([]string(nil), base...)
	for _, kv := range quietEnv {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := lookupEnv(env, k); !ok {
			env = append(env, kv)
		}
	}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		env = removeEnv(env, k)
		env = append(env, kv)
	}
	return env
}

func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func removeEnv(env []string, key string) []string {
	out := env[:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return out
}
