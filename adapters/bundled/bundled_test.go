package bundled_test

import (
	"slices"
	"testing"

	"github.com/fabric-runtime/fabric/adapters/bundled"
)

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
