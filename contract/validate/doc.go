// Package validate checks Fabric documents against their JSON Schemas, the
// committed schemas/ files that package schemas embeds (generated from the
// contract types by internal/schemagen, which this package does not link).
// It is kept out of package contract so that adapter hosts, which link
// contract, do not pay for JSON Schema compilation.
package validate
