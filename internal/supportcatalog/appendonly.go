package supportcatalog

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"time"
)

// CheckAppendOnly checks cur against base (an older copy of the same
// catalog: the merge base in CI): every version, signature and receipt
// file of base is in cur with the same bytes, and a changed trust.json is
// a valid rotation of base's (version + 1, signed by both root
// thresholds). It returns base's latest serial (0 when base has none),
// from which the versions cur added start.
func CheckAppendOnly(base fs.FS, baseDir string, cur fs.FS, dir string, now time.Time) (int, error) {
	latest := 0
	for _, sub := range []string{VersionsDir, "receipts"} {
		ents, err := fs.ReadDir(base, sub)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, untrusted(path.Join(baseDir, sub), "cannot list the base: %v", err)
		}
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			rel := path.Join(sub, e.Name())
			if err := sameFile(base, baseDir, cur, dir, rel); err != nil {
				return 0, err
			}
			if m := versionName().FindStringSubmatch(e.Name()); m != nil && sub == VersionsDir {
				latest = max(latest, atoi(m[1]))
			}
		}
	}
	baseTrust, err := fs.ReadFile(base, TrustFileName)
	if errors.Is(err, fs.ErrNotExist) {
		return latest, nil
	}
	if err != nil {
		return 0, trustErr(path.Join(baseDir, TrustFileName), "cannot read the base: %v", err)
	}
	curTrust, err := fs.ReadFile(cur, TrustFileName)
	if err != nil {
		return 0, trustErr(path.Join(dir, TrustFileName), "cannot read it: %v", err)
	}
	if bytes.Equal(baseTrust, curTrust) {
		return latest, sameFile(base, baseDir, cur, dir, TrustSigFileName)
	}
	old, err := ParseTrust(path.Join(baseDir, TrustFileName), baseTrust)
	if err != nil {
		return 0, err
	}
	sig, err := fs.ReadFile(cur, TrustSigFileName)
	if err != nil {
		return 0, trustErr(path.Join(dir, TrustSigFileName), "cannot read it: %v", err)
	}
	if _, err := VerifyRotation(old, path.Join(dir, TrustFileName), curTrust, sig, now); err != nil {
		return 0, err
	}
	return latest, nil
}

func sameFile(base fs.FS, baseDir string, cur fs.FS, dir, rel string) error {
	a, err := fs.ReadFile(base, rel)
	if err != nil {
		return untrusted(path.Join(baseDir, rel), "cannot read the base: %v", err)
	}
	b, err := fs.ReadFile(cur, rel)
	if err != nil {
		return untrusted(path.Join(dir, rel), "append-only: the file of the base is gone: %v", err)
	}
	if !bytes.Equal(a, b) {
		return untrusted(path.Join(dir, rel), "append-only: differs from %s; published catalog files never change", path.Join(baseDir, rel))
	}
	return nil
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
