// Package doccheck holds tests that the documentation resolves: every
// error or reason code the code can report is documented. It has no code
// of its own.
package doccheck
