// Package lazy holds package-level values computed at their first use,
// with no work at package init.
//
// A sync.OnceValue(f) assigned to a package-level variable runs when the
// package initializes: it allocates, so the package gets an init function,
// and every program that links the package runs it. In a host binary that
// bundles many adapters the kernel then maps the 64 KiB around each such
// function's code (fault-around) even in a host serving another adapter:
// measured with bench/idle, the bundled adapters' inits cost every idle
// fabric-host 0.23 MiB of RSS. A Value is a composite literal of a
// function literal, so the compiler lays it out as static data:
//
//	var envName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
//		return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
//	}}
package lazy

import "sync"

// Value is the result of New, computed by the first Get. Like a sync.Once
// it must not be copied after first use.
type Value[T any] struct {
	New  func() T
	once sync.Once
	v    T
}

// Get returns the value, calling New the first time.
func (l *Value[T]) Get() T {
	l.once.Do(func() { l.v = l.New() })
	return l.v
}

// Values is Value for a computation that can fail.
type Values[T any] struct {
	New  func() (T, error)
	once sync.Once
	v    T
	err  error
}

// Get returns the value and error, calling New the first time.
func (l *Values[T]) Get() (T, error) {
	l.once.Do(func() { l.v, l.err = l.New() })
	return l.v, l.err
}
