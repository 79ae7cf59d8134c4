// Package desired computes a deployment's desired state from a parsed
// fabric.deployment document: each agent's FabricConfig with its static
// attachments applied, the integration services attached definitions
// need, and a generation digest per resource. apply hands the state to the
// supervisor, which journals it.
//
// It never starts anything, never resolves a credential's value and never
// names a harness: a State holds references only.
package desired
