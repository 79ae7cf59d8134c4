package livetest

import "strings"

// Lookup turns "KEY=value" entries into a lookup function (later entries
// win), for fabric.WithEnv.
func Lookup(env []string) func(string) (string, bool) {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
