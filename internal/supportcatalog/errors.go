package supportcatalog

import (
	"fmt"

	"github.com/fabric-runtime/fabric/contract"
)

// Error codes, listed in docs/errors.md.
const (
	CodeTrustInvalid         = "trust_invalid"
	CodeCatalogUntrusted     = "catalog_untrusted"
	CodePackageNotInCatalog  = "package_not_in_catalog"
	CodePackageDigest        = "package_digest_mismatch"
	CodePackageIncompatible  = "package_incompatible"
	CodePackageUnqualified   = "package_unqualified"
	CodePackageRevoked       = "package_revoked"
	CodePackageSuperseded    = "package_superseded"
	CodePackageNotSelectable = "package_not_selectable"
)

// StageCatalog is the stage of trust and catalog load errors.
const StageCatalog = "catalog"

func trustErr(path, format string, args ...any) error {
	return &contract.ConfigError{Failure: contract.Failure{Stage: StageCatalog, Code: CodeTrustInvalid, Path: path, Message: fmt.Sprintf(format, args...)}}
}

func untrusted(path, format string, args ...any) error {
	return &contract.ConfigError{Failure: contract.Failure{Stage: StageCatalog, Code: CodeCatalogUntrusted, Path: path, Message: fmt.Sprintf(format, args...)}}
}

// Code is the stable code of err when it is one of this package's errors
// (or wraps one), else "".
func Code(err error) string {
	for err != nil {
		switch e := err.(type) {
		case *contract.ConfigError:
			return e.Code
		case *SelectionError:
			return e.Code
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return ""
		}
		err = u.Unwrap()
	}
	return ""
}
