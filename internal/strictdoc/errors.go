package strictdoc

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Error codes of the checks every strict document gets; a document's own
// package adds codes for its own rules.
const (
	CodeUnreadable               = "document_unreadable"
	CodeTooLarge                 = "document_too_large"
	CodeSyntax                   = "invalid_syntax"
	CodeMultipleDocuments        = "multiple_documents"
	CodeDuplicateKey             = "duplicate_key"
	CodeUnsupportedYAML          = "unsupported_yaml"
	CodeUnsupportedSchemaVersion = "unsupported_schema_version"
	CodeUnknownField             = "unknown_field"
	CodeMissingField             = "missing_field"
	CodeInvalidType              = "invalid_type"
	CodeInvalidValue             = "invalid_value"
)

// Error is one problem of a document, at a line (0 when unknown) and a
// dotted path ("" for the whole document).
type Error struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Path    string `json:"path,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error is "file:line: path: message".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors are every problem found in one document, sorted by line.
type Errors []*Error

// Error joins the errors, one a line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As and errors.Is reach each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Codes returns the code of each error, in order.
func (es Errors) Codes() []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Code
	}
	return out
}

// Report collects the errors of one parse of the document File.
type Report struct {
	File string
	errs Errors
}

// Add records an error.
func (r *Report) Add(code, path string, line int, msg string) {
	r.errs = append(r.errs, &Error{File: r.File, Line: line, Path: path, Code: code, Message: msg})
}

// At reports whether an error was recorded at path.
func (r *Report) At(path string) bool {
	return slices.ContainsFunc(r.errs, func(e *Error) bool { return e.Path == path })
}

// Failed reports whether any error was recorded.
func (r *Report) Failed() bool { return len(r.errs) > 0 }

// Err returns the errors sorted by line, or nil.
func (r *Report) Err() error {
	if len(r.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(r.errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	return r.errs
}

// Has reports whether an error that match accepts was recorded.
func (r *Report) Has(match func(*Error) bool) bool { return slices.ContainsFunc(r.errs, match) }
