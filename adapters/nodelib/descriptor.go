package nodelib

import (
	"bytes"
	_ "embed"
)

// Adapter ids.
const (
	DeepAgentsID = "nvidia.fabric.deepagents"
	StrandsID    = "nvidia.fabric.strands"
)

// deepAgentsDescriptor is deepagents.fabric-adapter.json.
//
//go:embed packages/nvidia.fabric.deepagents/deepagents.fabric-adapter.json
var deepAgentsDescriptor []byte

// strandsDescriptor is strands.fabric-adapter.json.
//
//go:embed packages/nvidia.fabric.strands/strands.fabric-adapter.json
var strandsDescriptor []byte

// Descriptor is one embedded descriptor document.
type Descriptor struct {
	Name string // file name
	Data []byte
}

// Descriptors returns the package's descriptors, in a fixed order.
func Descriptors() []Descriptor {
	return []Descriptor{
		{Name: "deepagents.fabric-adapter.json", Data: DeepAgentsDescriptor()},
		{Name: "strands.fabric-adapter.json", Data: StrandsDescriptor()},
	}
}

// DeepAgentsDescriptor returns deepagents.fabric-adapter.json (a copy: the
// embedded bytes stay unchanged).
func DeepAgentsDescriptor() []byte { return bytes.Clone(deepAgentsDescriptor) }

// StrandsDescriptor returns strands.fabric-adapter.json (a copy: the
// embedded bytes stay unchanged).
func StrandsDescriptor() []byte { return bytes.Clone(strandsDescriptor) }
