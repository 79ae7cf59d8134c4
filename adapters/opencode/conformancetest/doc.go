// Package conformancetest runs Fabric's adapter conformance suite against
// the OpenCode adapter with the real `opencode serve` and a modelstub (its
// only content is a test).
package conformancetest
