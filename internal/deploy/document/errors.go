package document

import "github.com/fabric-runtime/fabric/internal/strictdoc"

// Error codes. Every error of Parse and Load is an *Error with one of them;
// docs/deployment-document.md explains each.
const (
	CodeUnreadable               = strictdoc.CodeUnreadable
	CodeTooLarge                 = strictdoc.CodeTooLarge
	CodeSyntax                   = strictdoc.CodeSyntax
	CodeMultipleDocuments        = strictdoc.CodeMultipleDocuments
	CodeDuplicateKey             = strictdoc.CodeDuplicateKey
	CodeUnsupportedYAML          = strictdoc.CodeUnsupportedYAML
	CodeUnsupportedSchemaVersion = strictdoc.CodeUnsupportedSchemaVersion
	CodeUnknownField             = strictdoc.CodeUnknownField
	CodeMissingField             = strictdoc.CodeMissingField
	CodeInvalidType              = strictdoc.CodeInvalidType
	CodeInvalidValue             = strictdoc.CodeInvalidValue
	CodeInvalidCredential        = "invalid_credential"
	CodeUnknownKind              = "unknown_kind"
	CodeDuplicateName            = "duplicate_name"
	CodeUnknownReference         = "unknown_reference"
	CodeReferenceNotVisible      = "reference_not_visible"
	CodeDuplicateReference       = "duplicate_reference"
	CodeShadowedName             = "shadowed_name"
)

// Error is one problem of a document, at a line (0 when unknown) and a
// dotted path ("" for the whole document).
type Error = strictdoc.Error

// Errors are every problem found in one document, sorted by line.
type Errors = strictdoc.Errors

// MaxDocumentSize is the largest document, in bytes, that is read.
const MaxDocumentSize = strictdoc.MaxSize
