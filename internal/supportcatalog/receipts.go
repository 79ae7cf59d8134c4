package supportcatalog

import (
	"context"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
)

// ReceiptVerifier verifies one qualification receipt envelope cited by a
// catalog entry: its signature by the qualifier role, its subjects
// against the entry's digests, its platform and its verdict, and, when
// the entry's receipt says observed_all, that every item with an
// observable postcondition was observed and agreed. The caller
// passes one (the qualification package has it); this package only
// checks that the file exists and has the digest the entry cites.
type ReceiptVerifier interface {
	VerifyReceipt(ctx context.Context, r Receipt) error
}

// ReceiptVerifierFunc adapts a function to ReceiptVerifier.
type ReceiptVerifierFunc func(ctx context.Context, r Receipt) error

// VerifyReceipt calls f.
func (f ReceiptVerifierFunc) VerifyReceipt(ctx context.Context, r Receipt) error { return f(ctx, r) }

// Receipt is what a ReceiptVerifier is given.
type Receipt struct {
	// Entry is the catalog entry citing the receipt; Platform the
	// platform it is the receipt of.
	Entry    *contract.CatalogEntry
	Platform string
	// Path is the receipt file (for messages); Envelope its bytes, whose
	// sha256 is the one the entry cites.
	Path     string
	Envelope []byte
	// Qualifiers are the qualifier role's keys and Threshold how many of
	// them must have signed.
	Qualifiers []attest.PublicKey
	Threshold  int
}

// ReceiptPath is a receipt's file, relative to the catalog directory.
func ReceiptPath(sha256 string) string { return "receipts/sha256-" + sha256 + ".intoto.json" }

// ReceiptStatus is the outcome of verifying one cited receipt.
type ReceiptStatus struct {
	Entry    string `json:"entry"`
	Platform string `json:"platform"`
	SHA256   string `json:"sha256"`
	// Verified is true when a ReceiptVerifier accepted the envelope.
	Verified bool `json:"verified"`
	// Problem says why it is not verified.
	Problem string `json:"problem,omitempty"`
}
