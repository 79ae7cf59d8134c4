// Package supportcatalog reads and verifies Fabric's support catalog: the
// trust root (trust.json, its keys, roles and thresholds, signed by its
// root role), the hash-chained catalog versions (versions/NNNNNN.json,
// each with a detached DSSE signature over its exact bytes), the support
// state transitions between consecutive versions, the append-only rule
// against a base copy, the rollback serial, and selection: the pure
// decision of which catalog entry a request for a package may run.
//
// It fails closed: anything it cannot verify is an error with a stable
// code (trust_invalid, catalog_untrusted, package_*). It never picks an
// alternative to what was asked for, never verifies a receipt envelope
// itself (the caller passes a ReceiptVerifier), never touches the network
// and keeps no state but the serial file it is told about.
package supportcatalog
