//go:build !unix

package scripted

import "os/exec"

// setProcessGroup: elsewhere the command alone is killed on cancellation.
func setProcessGroup(*exec.Cmd) {}
