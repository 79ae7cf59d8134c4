// Package temporal runs a fabric batch on Temporal: a BatchWorkflow keeps
// a sliding window of TrialWorkflows, each of which runs one heartbeating
// RunTrial activity on the host that polls its quota key's task queue.
// Trials run through the batch package exactly as the local runner runs
// them, and the batch directory (a shared filesystem) stays the result
// store: trial.json is still the commit point and the report is built from
// it.
//
// It lives in a nested module so the main module never links the Temporal
// SDK. It must never put large payloads (run results, events, workspaces)
// into workflow history: activities pass paths, not contents.
package temporal
