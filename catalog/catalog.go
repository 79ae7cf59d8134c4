// Package catalog is this project's own support catalog, built into the
// fabric binary: the trust root (trust.json, trust.sig.json), the
// hash-chained versions and the receipts they cite. TrustSHA256 pins the
// trust root; a rotation changes it here, in review, and nowhere else.
// internal/supportcatalog verifies what this package only carries.
//
// The keys in testkeys/ are test keys for CI and must never sign a
// production catalog.
package catalog

import (
	"embed"
	"io/fs"
)

// TrustSHA256 is the hex sha256 of trust.json: the trust root this
// Fabric accepts without --trust.
const TrustSHA256 = "b3d8bc1e28efeac6fcb0f88380cb6efbc8a09e53b4f78941b78a54e4600f96ee"

//go:embed trust.json trust.sig.json versions receipts
var files embed.FS

// FS is the catalog directory as built in.
func FS() fs.FS { return files }
