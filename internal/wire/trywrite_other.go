//go:build !unix

package wire

import "io"

func nonblockingWriter(io.Writer) TryWriter { return nil }
