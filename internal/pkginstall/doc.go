// Package pkginstall installs a runtime package's pinned artifacts into
// Fabric's data directory and checks, before anything installed is
// executed, that the installed files are still the ones installed.
//
// An install runs npm ci from the package's lockfile in a staging
// directory, checks every installed npm package against the lockfile and
// the package descriptor's artifact digests, records a tree manifest and
// the bins in install.json, and renames the staging directory into place:
// a crash leaves no half-written install. Verify re-checks an install
// against its install.json; any difference is an artifact_digest_mismatch.
//
// It never names a harness: what it installs comes from the descriptor.
// It never runs anything installed, only npm (and the pinned Node npm
// runs on).
package pkginstall
