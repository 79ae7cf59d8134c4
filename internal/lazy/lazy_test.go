package lazy

import (
	"errors"
	"testing"
)

func TestValueComputesOnce(t *testing.T) {
	calls := 0
	v := Value[int]{New: func() int { calls++; return 42 }}
	if calls != 0 {
		t.Fatalf("New ran before Get")
	}
	for range 3 {
		if got := v.Get(); got != 42 {
			t.Fatalf("Get = %d, want 42", got)
		}
	}
	if calls != 1 {
		t.Fatalf("New ran %d times, want 1", calls)
	}
}

func TestValuesKeepsTheError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	v := Values[string]{New: func() (string, error) { calls++; return "", boom }}
	for range 2 {
		if _, err := v.Get(); !errors.Is(err, boom) {
			t.Fatalf("Get error = %v, want boom", err)
		}
	}
	if calls != 1 {
		t.Fatalf("New ran %d times, want 1", calls)
	}
}

// A package-level Value is static data: declaring one adds no init work.
var static = Value[[]string]{New: func() []string { return []string{"a"} }}

func TestPackageLevelValue(t *testing.T) {
	if got := static.Get(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("Get = %v", got)
	}
}
