//go:build !linux

package adapterkit

import (
	"errors"
	"fmt"
	"io"
)

// protectStdio is implemented on Linux only; elsewhere Serve needs
// WithStreams for v1.
func protectStdio() (io.Reader, io.Writer, error) {
	return nil, nil, fmt.Errorf("adapterkit: v1 on process stdio: %w", errors.ErrUnsupported)
}
