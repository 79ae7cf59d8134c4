//go:build !linux

package proc

// RunAsSubreaper is Linux-only (it relies on PR_SET_CHILD_SUBREAPER and
// PR_SET_PDEATHSIG); elsewhere it runs serve and returns its code.
func RunAsSubreaper(serve func() int) int { return serve() }

// KillDescendants is Linux-only; elsewhere it does nothing.
func KillDescendants() {}
