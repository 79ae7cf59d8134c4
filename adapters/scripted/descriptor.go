package scripted

import (
	"bytes"
	_ "embed"
)

// descriptor is the bundled descriptor of the scripted adapter on host
// protocol v2; descriptorV1 is the same adapter on the upstream-compatible
// v1 protocol (id fabric.scripted.v1).
var (
	//go:embed packages/fabric.scripted/scripted.fabric-adapter.json
	descriptor []byte
	//go:embed packages/fabric.scripted.v1/scripted-v1.fabric-adapter.json
	descriptorV1 []byte
)

// ID is the adapter id of the v2 descriptor; IDv1 of the v1 descriptor.
const (
	ID   = "fabric.scripted"
	IDv1 = "fabric.scripted.v1"
)

// Descriptor returns the scripted adapter's descriptor on host protocol v2
// (a copy: the embedded bytes stay unchanged).
func Descriptor() []byte { return bytes.Clone(descriptor) }

// DescriptorV1 returns the same adapter's descriptor on the upstream-
// compatible protocol v1 (a copy: the embedded bytes stay unchanged).
func DescriptorV1() []byte { return bytes.Clone(descriptorV1) }
