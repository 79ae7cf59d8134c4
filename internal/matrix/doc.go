// Package matrix generates docs/harnesses.md, the capability matrix of
// every adapter Fabric knows: the bundled descriptors and the descriptors
// discoverable from the npm projects under harnesses/ (package roots in
// their node_modules, as the catalog discovers them). It reads only the
// descriptors and the projects' package.json and package-lock.json files,
// so an adapter added to the bundle or to a harnesses project shows up
// without any change here.
//
// It must never know an adapter or harness by name: every column is
// derived from descriptor fields and lockfile metadata.
package matrix

//go:generate go run ../../cmd/fabric-matrix -root ../..
