package pkginstall

import (
	"bytes"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// lockfile is the part of an npm package-lock.json (lockfileVersion 2 or
// 3) the install checks.
type lockfile struct {
	LockfileVersion int                  `json:"lockfileVersion"`
	Packages        map[string]lockEntry `json:"packages"`
}

// lockEntry is one packages entry, keyed by its install path
// (node_modules/<name>, nested for duplicates). Name is set for aliases
// (npm:<real>@<version>).
type lockEntry struct {
	Name      string `json:"name,omitempty"`
	Version   string `json:"version,omitempty"`
	Resolved  string `json:"resolved,omitempty"`
	Integrity string `json:"integrity,omitempty"`
	Link      bool   `json:"link,omitempty"`
	Optional  bool   `json:"optional,omitempty"`
}

func parseLockfile(data []byte, name string) (*lockfile, error) {
	var l lockfile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if l.LockfileVersion < 2 || l.Packages == nil {
		return nil, fmt.Errorf("%s: lockfileVersion %d has no packages map (want npm 7 or later, lockfileVersion 2 or 3)", name, l.LockfileVersion)
	}
	for k, e := range l.Packages {
		if k == "" || e.Link {
			continue
		}
		if !strings.HasPrefix(k, "node_modules/") || strings.Contains(k, "..") {
			return nil, fmt.Errorf("%s: packages key %q is not under node_modules/", name, k)
		}
		if n := installedName(k); n == "" || slices.Contains(strings.Split(n, "/"), "") {
			// "node_modules/" would install over node_modules itself.
			return nil, fmt.Errorf("%s: packages key %q names no package", name, k)
		}
		if e.Version == "" {
			return nil, fmt.Errorf("%s: packages[%q] has no version", name, k)
		}
	}
	return &l, nil
}

// installedName is the package name a lockfile key installs as: the path
// after the last node_modules/.
func installedName(key string) string {
	i := strings.LastIndex(key, "node_modules/")
	return key[i+len("node_modules/"):]
}

// sha512Of decodes a sha512 digest written as npm writes it
// ("sha512-<base64>", an SRI string, possibly with several hashes), bare
// base64, or hex.
func sha512Of(s string) ([]byte, error) {
	for _, f := range strings.Fields(s) {
		if v, ok := strings.CutPrefix(f, "sha512-"); ok {
			s = v
			break
		}
	}
	if len(s) == 2*sha512.Size {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != sha512.Size {
		return nil, fmt.Errorf("%q is not a sha512 digest (sha512-<base64>, base64 or hex)", s)
	}
	return b, nil
}

// sri is the npm form of a sha512 digest.
func sri(b []byte) string { return "sha512-" + base64.StdEncoding.EncodeToString(b) }
