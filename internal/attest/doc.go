// Package attest signs and verifies DSSE envelopes (Dead Simple Signing
// Envelope) with ed25519 keys, and holds the key files Fabric's package
// roles use. It is the one home of signing in Fabric: the support
// catalog's signatures and the qualification receipts both go through it.
//
// A signature is over PAE(payloadType, payload), never over the payload
// alone, so a payload cannot be replayed under another type. A key's id is
// the hex sha256 of its raw 32-byte public key; an envelope's keyid is a
// hint only, and Verify tries every key it is given.
package attest
