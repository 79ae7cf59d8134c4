// Package batch runs N tasks x M agent configs x K repeats (a
// fabric.batch/v1alpha1 spec) and keeps each trial's graded outcome on
// disk, so that a batch can be interrupted, resumed, regraded and
// reported.
//
// Load reads a spec strictly (every error at its file and line); Open
// prepares a batch directory (lock.json, the trial list and digests);
// Runner.Run is the local executor (a bounded worker pool with per-config
// and per-quota-key limits); Attempt and Commit are the pieces other
// executors (the Temporal backend in scale/temporal) build on.
//
// The batch directory is the source of truth: a trial is done when its
// trial.json exists, written by rename. Infrastructure errors are retried
// by class; a graded trial (passed or failed) is never run again.
//
// It never reads a credential's value (configs name environment
// variables), never writes one to a trial's files, and leaves no process
// behind: every runtime it starts is stopped before its trial is recorded.
package batch
