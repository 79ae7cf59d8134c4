package nodelib

import _ "embed"

// Adapter ids.
const (
	DeepAgentsID = "nvidia.fabric.deepagents"
	StrandsID    = "nvidia.fabric.strands"
)

// DeepAgentsDescriptor is deepagents.fabric-adapter.json.
//
//go:embed packages/nvidia.fabric.deepagents/deepagents.fabric-adapter.json
var DeepAgentsDescriptor []byte

// StrandsDescriptor is strands.fabric-adapter.json.
//
//go:embed packages/nvidia.fabric.strands/strands.fabric-adapter.json
var StrandsDescriptor []byte

// Descriptor is one embedded descriptor document.
type Descriptor struct {
	Name string // file name
	Data []byte
}

// Descriptors returns the package's descriptors, in a fixed order.
func Descriptors() []Descriptor {
	return []Descriptor{
		{Name: "deepagents.fabric-adapter.json", Data: DeepAgentsDescriptor},
		{Name: "strands.fabric-adapter.json", Data: StrandsDescriptor},
	}
}
