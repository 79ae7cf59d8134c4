package matrix

import (
	"slices"
	"testing"
)

func TestPinnedForNamesPlatformPackages(t *testing.T) {
	pkgs := []npmPackage{
		{Name: "@v/cli", Version: "1.0.0", Bins: []string{"tool"}, Optional: []string{"@v/cli-darwin-arm64", "@v/cli-linux-x64"}, Project: "harnesses/v"},
		{Name: "@v/cli-linux-x64", Version: "1.0.1", Project: "harnesses/v"},
		{Name: "@v/cli-linux-x64", Version: "9.9.9", Project: "harnesses/other"},
		{Name: "plain", Version: "2.0.0", Bins: []string{"plain"}, Project: "harnesses"},
	}
	cases := []struct {
		bins []string
		want []string
	}{
		{[]string{"tool"}, []string{"@v/cli 1.0.0", "@v/cli-linux-x64 1.0.1"}},
		{[]string{"plain"}, []string{"plain 2.0.0"}},
		{[]string{"node", "missing"}, nil},
	}
	for _, c := range cases {
		if got := pinnedFor(c.bins, pkgs); !slices.Equal(got, c.want) {
			t.Errorf("pinnedFor(%v) = %v, want %v", c.bins, got, c.want)
		}
	}
}
