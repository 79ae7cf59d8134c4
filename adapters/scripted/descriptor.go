package scripted

import _ "embed"

// Descriptor is the bundled descriptor of the scripted adapter on host
// protocol v2; DescriptorV1 is the same adapter on the upstream-compatible
// v1 protocol (id fabric.scripted.v1).
var (
	//go:embed packages/fabric.scripted/scripted.fabric-adapter.json
	Descriptor []byte
	//go:embed packages/fabric.scripted.v1/scripted-v1.fabric-adapter.json
	DescriptorV1 []byte
)

// ID is the adapter id of the v2 descriptor; IDv1 of the v1 descriptor.
const (
	ID   = "fabric.scripted"
	IDv1 = "fabric.scripted.v1"
)
