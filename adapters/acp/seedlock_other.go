//go:build !unix

package acp

// lockFile: without flock no seed is built (every start stays unseeded).
func lockFile(string) (func(), error) { return nil, errSeedBusy }

const scratchNice = 10

func setNice(int, int) error { return nil }

func sameDevice(string, string) bool { return false }
