package codex

import (
	"bytes"
	_ "embed"
)

// descriptor is the adapter's bundled descriptor (codex.fabric-adapter.json).
//
//go:embed packages/nvidia.fabric.codex/codex.fabric-adapter.json
var descriptor []byte

// ID is the adapter id, the same as upstream NeMo Fabric's Codex adapter.
const ID = "nvidia.fabric.codex"

// Descriptor returns the adapter's bundled descriptor document (a copy: the
// embedded bytes stay unchanged).
func Descriptor() []byte { return bytes.Clone(descriptor) }
