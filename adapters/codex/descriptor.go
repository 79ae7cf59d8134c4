package codex

import _ "embed"

// Descriptor is the adapter's bundled descriptor (codex.fabric-adapter.json).
//
//go:embed packages/nvidia.fabric.codex/codex.fabric-adapter.json
var Descriptor []byte

// ID is the adapter id, the same as upstream NeMo Fabric's Codex adapter.
const ID = "nvidia.fabric.codex"
