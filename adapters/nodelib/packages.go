package nodelib

import (
	"embed"
	"io/fs"
)

//go:embed all:packages
var packages embed.FS

// Packages is the adapter's runtime packages: packages/<package id>/ with
// its fabric-package.json, the adapter descriptor and what qualifying and
// installing it need.
func Packages() fs.FS { return packages }
