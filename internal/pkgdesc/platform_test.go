package pkgdesc

import "testing"

func TestPlatform(t *testing.T) {
	for _, tc := range [][3]string{{"linux", "amd64", "linux-x86_64"}, {"linux", "arm64", "linux-aarch64"}, {"darwin", "arm64", "darwin-aarch64"}, {"linux", "riscv64", "linux-riscv64"}} {
		if got := Platform(tc[0], tc[1]); got != tc[2] {
			t.Errorf("Platform(%s, %s) = %s, want %s", tc[0], tc[1], got, tc[2])
		}
	}
}
