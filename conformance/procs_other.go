//go:build !linux

package conformance

import "errors"

// procChecks says whether process checks are available here.
const procChecks = false

func groupMembers(int) []int           { return nil }
func processesMentioning(string) []int { return nil }
func killGroup(int) error              { return errors.ErrUnsupported }
func killPids([]int)                   {}

func hostExe(int) (string, error) { return "", errors.ErrUnsupported }
