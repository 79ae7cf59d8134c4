package pkgdesc

import "runtime"

// HostPlatform is this machine's package platform name (linux-x86_64,
// linux-aarch64, darwin-aarch64, ...): the key of a descriptor's
// artifacts, a catalog entry's receipts and a receipt's platform.
func HostPlatform() string { return Platform(runtime.GOOS, runtime.GOARCH) }

// Platform names goos/goarch the way packages do.
func Platform(goos, goarch string) string {
	switch goarch {
	case "amd64":
		goarch = "x86_64"
	case "arm64":
		goarch = "aarch64"
	}
	return goos + "-" + goarch
}
