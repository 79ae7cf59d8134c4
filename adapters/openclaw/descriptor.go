package openclaw

import (
	"bytes"
	_ "embed"
)

// descriptor is the adapter's bundled descriptor (openclaw.fabric-adapter.json).
//
//go:embed packages/nvidia.fabric.openclaw/openclaw.fabric-adapter.json
var descriptor []byte

// ID is the adapter id, the same as upstream NeMo Fabric's OpenClaw adapter.
const ID = "nvidia.fabric.openclaw"

// adapterName is the adapter's name in interface paths (P2):
// <artifact root>/.fabric/openclaw/runtimes/<runtime-id>/interfaces/.
const adapterName = "openclaw"

// Dashboard is the name of the Control UI interface (S7).
const Dashboard = "dashboard"

// Descriptor returns the adapter's bundled descriptor document (a copy: the
// embedded bytes stay unchanged).
func Descriptor() []byte { return bytes.Clone(descriptor) }
