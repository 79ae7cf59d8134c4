// Package archcheck holds the harness-name ratchet: a test that counts, per
// directory, the harness, adapter and package names (and inference API
// families) that non-test Go code mentions in string literals and
// identifiers (never comments), and holds every directory outside the free
// locations to its budget in scripts/harness-name-budget.json. Budgets only
// go down: a count above its budget, below it (lower it), in a directory
// with no budget, or a budget above the one at the merge base fails. It is
// the counting half of scripts/check-core-neutral, which stays the zero-
// tolerance check for the core. It uses only the standard library and git,
// and must never change a source file; -update rewrites the budget file,
// and only downward.
package archcheck
