// Package qualify qualifies a runtime package: it runs the conformance
// suite with the package's own profile (serving the profile's scripted
// model endpoint itself), judges every item by its tier, and writes the
// outcome as an in-toto Statement v1 with a qualification predicate
// (contract.QualificationStatement), signed into a DSSE receipt by a
// qualifier key. VerifyReceipt checks such a receipt against the package
// a caller has on disk.
//
// The statement types are plain Go structs (no in-toto library): the
// format is small and fixed, and golden JSON pins it. The package never
// holds an executor's key: the executor's claim and the suite's
// observation are recorded apart, and only the qualifier signs. It never
// names a harness.
package qualify
