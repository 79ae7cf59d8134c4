// Package strictdoc reads the strict YAML or JSON documents Fabric accepts
// from users (deployment documents, batch specs) into Go values: unknown
// fields, duplicate keys, null, YAML anchors, aliases, merge keys, tags and
// several documents are errors, and every error is reported at its file,
// line and dotted path, all of them at once.
//
// A document's own package adds its rules and codes on top (Decoder.Custom,
// Decoder.Rules). It must never put a value in a message (values may be
// secrets), never touch the network and keep no state between calls.
package strictdoc
