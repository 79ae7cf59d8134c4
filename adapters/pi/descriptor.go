package pi

import _ "embed"

// Descriptor is the adapter's bundled descriptor (pi.fabric-adapter.json).
//
//go:embed packages/nvidia.fabric.pi-rpc/pi.fabric-adapter.json
var Descriptor []byte

// ID is the adapter id. Upstream's SDK-based host owns nvidia.fabric.pi.
const ID = "nvidia.fabric.pi-rpc"
