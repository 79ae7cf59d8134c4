// Package gadget names the fixture package's id.
package gadget

const id = "gadget"
