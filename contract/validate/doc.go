// Package validate checks Fabric documents against the JSON Schemas
// generated from the contract types. It is kept out of package contract so
// that adapter hosts, which link contract, do not pay the validator's
// start-up cost.
package validate
