// Package receipt opens and checks qualification receipts: DSSE envelopes,
// signed by qualifier keys, of an in-toto Statement v1 with a
// qualification predicate (contract.QualificationStatement, documented in
// docs/predicates/qualification-v1.md). It signs a statement into one
// (Sign), verifies one against the package a caller has (VerifyReceipt,
// Check), and is the support catalog's receipt verifier (CatalogVerifier).
//
// It is apart from package qualify, which runs the conformance suite to
// write receipts, so that a program that only selects packages against the
// catalog (fabric-agent-ctl) verifies receipts without linking the suite.
package receipt
