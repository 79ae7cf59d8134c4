// Package core names codex only in this comment, which is never counted.
package core

// Name is "codex"; the literal below is one mention.
const Name = "codex"

// ID is a second literal mention.
const ID = "nvidia.fabric.thing"
