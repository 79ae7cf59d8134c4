package pkginstall

import (
	"fmt"

	"github.com/fabric-runtime/fabric/contract"
)

// StageInstall is the stage of errors raised while installing.
const StageInstall = "install"

// Error codes (docs/errors.md, "Installing packages").
const (
	// CodeArtifactDigestMismatch: a lockfile integrity differs from the
	// descriptor's digest, or an installed file differs from install.json.
	CodeArtifactDigestMismatch = "artifact_digest_mismatch"
	// CodeNotInstallable: the descriptor or its lockfile cannot be
	// installed here (no npm install section, no artifacts for this
	// platform, an artifact missing from the lockfile).
	CodeNotInstallable = "package_not_installable"
	// CodeInstallFailed: npm (or the pinned Node's install) failed, or
	// what it installed lacks a declared artifact or bin.
	CodeInstallFailed = "package_install_failed"
)

func mismatch(stage, pkg, path, format string, args ...any) error {
	return &contract.RuntimeError{Failure: contract.Failure{
		Stage: stage, Code: CodeArtifactDigestMismatch, Path: path,
		Message:  fmt.Sprintf("package %s: ", pkg) + fmt.Sprintf(format, args...),
		Metadata: map[string]any{"package": pkg},
	}}
}

func notInstallable(field, format string, args ...any) error {
	return &contract.ConfigError{Failure: contract.Failure{Stage: StageInstall, Code: CodeNotInstallable, Path: field, Message: fmt.Sprintf(format, args...)}}
}

func installFailed(err error, format string, args ...any) error {
	return &contract.RuntimeError{Failure: contract.Failure{Stage: StageInstall, Code: CodeInstallFailed, Message: fmt.Sprintf(format, args...), Err: err}}
}
