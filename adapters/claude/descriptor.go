package claude

import (
	"bytes"
	_ "embed"
)

// descriptor is the adapter's bundled descriptor.
//
//go:embed packages/nvidia.fabric.claude/claude.fabric-adapter.json
var descriptor []byte

// ID is the adapter id (and the runner's builtin name).
const ID = "nvidia.fabric.claude"

// Descriptor returns the adapter's bundled descriptor document (a copy: the
// embedded bytes stay unchanged).
func Descriptor() []byte { return bytes.Clone(descriptor) }
