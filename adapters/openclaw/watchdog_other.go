//go:build !linux

package openclaw

import "time"

// watchdog needs procfs; elsewhere there is none.
type watchdog struct{}

func startWatchdog(string) (*watchdog, error) { return nil, nil }
func (wd *watchdog) stop(time.Duration)       {}
