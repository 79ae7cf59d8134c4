//go:build !linux

package proc

import "time"

// KillByEnv is Linux-only (it reads /proc); elsewhere it does nothing.
func KillByEnv(string, time.Duration) []int { return nil }
