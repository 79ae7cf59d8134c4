package pkgop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// ResolveStatePaths maps each state path id to its absolute path under
// home: "~/x" and "x" both mean home/x; a path that leaves home, is home
// itself, or an id given twice, is an error naming its field.
func ResolveStatePaths(sps []contract.PackageStatePath, home string) (map[string]string, error) {
	out := map[string]string{}
	for i, sp := range sps {
		field := fmt.Sprintf("state_paths[%d]", i)
		if sp.ID == "" {
			return nil, fmt.Errorf("%s.id is missing", field)
		}
		if _, dup := out[sp.ID]; dup {
			return nil, fmt.Errorf("%s.id %q is declared twice", field, sp.ID)
		}
		rel := strings.TrimPrefix(sp.Path, "~/")
		if rel == "" || !filepath.IsLocal(rel) || filepath.Clean(rel) == "." {
			return nil, fmt.Errorf("%s.path %q must be relative to the runtime home (or ~/...) and stay inside it", field, sp.Path)
		}
		out[sp.ID] = filepath.Join(home, rel)
	}
	return out, nil
}

// Environ is the little an operation gets: PATH (with extraPath first)
// and the locale of lookup, HOME set to the runtime home. Nothing else is
// passed, so no credential of the caller reaches a helper.
func Environ(home string, extraPath []string, lookup func(string) (string, bool)) []string {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	env := []string{"HOME=" + home}
	path, _ := lookup("PATH")
	if len(extraPath) > 0 {
		path = strings.Join(append(extraPath, path), string(os.PathListSeparator))
		path = strings.TrimSuffix(path, string(os.PathListSeparator))
	}
	if path != "" {
		env = append(env, "PATH="+path)
	}
	for _, k := range []string{"LANG", "LC_ALL", "TZ"} {
		if v, ok := lookup(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
