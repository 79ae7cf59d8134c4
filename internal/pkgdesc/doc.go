// Package pkgdesc loads a runtime package: its descriptor
// (fabric-package.json, fabric.package/v1alpha1) read strictly and
// checked against the published schema and the package directory it
// names (adapter descriptor and its sha256, artifacts per platform,
// operations' writes, qualification profile, install lockfile), a
// credential lint over every value, and the package digest (the fm1 tree
// manifest of the directory, canonical modes, .fabric-package-ignore
// honoured), the same for a directory on disk and one embedded in the
// binary.
//
// It only reads: it never installs, runs or fetches anything, never
// consults the support catalog, and never puts a descriptor value in a
// message (a value may be a secret).
package pkgdesc
