package harnessui

import (
	"path/filepath"

	"github.com/fabric-runtime/fabric/adapterkit"
)

// ArtifactRoot returns the runtime's artifact root (P1): the
// RuntimeContext's artifact directory, or exactly <base>/artifacts when it
// is unset, wherever the adapter keeps its other files.
func ArtifactRoot(in adapterkit.StartInput) string {
	rc := in.RuntimeContext
	switch {
	case rc.Artifacts.Root != nil && *rc.Artifacts.Root != "":
		return *rc.Artifacts.Root
	case rc.Environment.Artifacts != nil && *rc.Environment.Artifacts != "":
		return *rc.Environment.Artifacts
	case in.Artifacts != "":
		return in.Artifacts
	}
	return filepath.Join(in.BaseDir, "artifacts")
}

// InterfacesDir returns <artifact root>/.fabric/<adapter>/runtimes/<runtime
// id>/interfaces, the directory that holds a runtime's interface files (P3,
// P4):
//
//	<name>.token    the credential, 0600, for interfaces that have one (P3)
//	<name>          a terminal interface's launcher, 0700 (P4)
//	<name>.running  a terminal interface's marker, 0600 (P4)
func InterfacesDir(artifactRoot, adapter, runtimeID string) string {
	return filepath.Join(artifactRoot, ".fabric", adapter, "runtimes", runtimeID, "interfaces")
}

func tokenFile(dir, name string) string    { return filepath.Join(dir, name+".token") }
func markerFile(dir, name string) string   { return filepath.Join(dir, name+".running") }
func launcherFile(dir, name string) string { return filepath.Join(dir, name) }
