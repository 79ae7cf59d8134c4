package bundled_test

import (
	"slices"
	"testing"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/runtime"
)

// The variable a host reads is the one the core sets.
func TestEnvAdapterIsTheCoresVariable(t *testing.T) {
	if bundled.EnvAdapter != runtime.EnvBuiltinAdapter {
		t.Fatalf("bundled.EnvAdapter = %q, the core sets %q", bundled.EnvAdapter, runtime.EnvBuiltinAdapter)
	}
}

// The set a client opts into is every bundled descriptor, in order.
func TestAdaptersYieldsEveryDescriptor(t *testing.T) {
	var got []string
	for name, data := range bundled.Adapters().Descriptors() {
		if len(data) == 0 {
			t.Errorf("%s is empty", name)
		}
		got = append(got, name)
	}
	var want []string
	for _, d := range bundled.Descriptors() {
		want = append(want, d.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Adapters().Descriptors() = %v, want %v", got, want)
	}
}
