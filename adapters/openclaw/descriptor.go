package openclaw

import _ "embed"

// Descriptor is the adapter's bundled descriptor (openclaw.fabric-adapter.json).
//
//go:embed packages/nvidia.fabric.openclaw/openclaw.fabric-adapter.json
var Descriptor []byte

// ID is the adapter id, the same as upstream NeMo Fabric's OpenClaw adapter.
const ID = "nvidia.fabric.openclaw"

// adapterName is the adapter's name in interface paths (P2):
// <artifact root>/.fabric/openclaw/runtimes/<runtime-id>/interfaces/.
const adapterName = "openclaw"

// Dashboard is the name of the Control UI interface (S7).
const Dashboard = "dashboard"
