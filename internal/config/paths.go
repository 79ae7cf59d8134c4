package config

import (
	"path/filepath"

	"github.com/fabric-runtime/fabric/contract"
)

// resolvePaths makes relative paths absolute against base. Absolute paths
// are kept as written, and no path has to exist.
//
// discovery.local_paths name descriptors that Fabric itself reads on this
// host, so they are always resolved. skills.paths, runtime.artifacts,
// environment.workspace and environment.artifacts are resolved only when
// the environment is local (no environment, or provider "local"): for any
// other provider they are paths inside that environment, not on this host,
// and are passed on as written (upstream does the same for workspace and
// artifacts).
func resolvePaths(cfg *contract.FabricConfig, base string) {
	if cfg.Discovery != nil {
		resolveAll(cfg.Discovery.LocalPaths, base)
	}
	env := cfg.Environment
	if env != nil && env.Provider != contract.EnvironmentLocal {
		return
	}
	if cfg.Skills != nil {
		resolveAll(cfg.Skills.Paths, base)
	}
	resolveOne(cfg.Runtime.Artifacts, base)
	if env != nil {
		resolveOne(env.Workspace, base)
		resolveOne(env.Artifacts, base)
	}
}

func resolveAll(paths []string, base string) {
	for i := range paths {
		resolveOne(&paths[i], base)
	}
}

func resolveOne(p *string, base string) {
	if p != nil && !filepath.IsAbs(*p) {
		*p = filepath.Join(base, *p)
	}
}
