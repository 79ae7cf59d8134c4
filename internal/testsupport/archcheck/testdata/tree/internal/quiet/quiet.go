// Package quiet names codex, claude and pi only in comments.
package quiet

/* gemini in a block comment */
const words = "pipe, api, copilot" // none is a name: pi matches whole words only
