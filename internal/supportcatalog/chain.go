package supportcatalog

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
)

// Catalog file names inside a catalog directory.
const (
	TrustFileName    = "trust.json"
	TrustSigFileName = "trust.sig.json"
	VersionsDir      = "versions"
)

// VersionPath is version serial's file, relative to the catalog directory.
func VersionPath(serial int) string { return fmt.Sprintf("%s/%06d.json", VersionsDir, serial) }

// SigPath is the detached signature of version serial.
func SigPath(serial int) string { return fmt.Sprintf("%s/%06d.sig.json", VersionsDir, serial) }

var versionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{6})\.json$`) })

// TrustFile is a trust root given directly (--trust FILE), instead of
// the catalog directory's trust.json checked against the pinned digest.
type TrustFile struct {
	Path      string
	Data, Sig []byte
}

// Options say how Load verifies.
type Options struct {
	// Now is the time expiry is checked at.
	Now time.Time
	// TrustSHA256 is the pinned digest (the one embedded in the binary)
	// the directory's trust.json must have. Ignored when Trust is set.
	TrustSHA256 string
	Trust       *TrustFile
	// SerialFile keeps the last serial accepted (rollback protection);
	// empty skips the check. A successful Load records the new serial.
	SerialFile string
	// SignaturesFrom is the first serial whose signature is checked;
	// 0 checks the latest only (older versions are pinned by the hash
	// chain the latest's signature covers). CI checks every version added
	// since its base.
	SignaturesFrom int
	// Receipts verifies cited receipt envelopes; nil leaves them
	// unverified (and so unselectable).
	Receipts ReceiptVerifier
}

// Catalog is a verified catalog: its trust root, every version in order
// and the receipt outcomes of the latest.
type Catalog struct {
	Dir      string
	Trust    *Trust
	Versions []*Version
	Receipts []ReceiptStatus
}

// Latest is the newest version.
func (c *Catalog) Latest() *Version { return c.Versions[len(c.Versions)-1] }

// receipt returns the status of entry's receipt for platform.
func (c *Catalog) receipt(entry, platform string) (ReceiptStatus, bool) {
	for _, r := range c.Receipts {
		if r.Entry == entry && r.Platform == platform {
			return r, true
		}
	}
	return ReceiptStatus{}, false
}

// Load reads and verifies the catalog in fsys (dir names it in
// messages): the trust root, every version's structure, the chain
// (serials 1..N, each previous the sha256 of the version before), the
// transitions between consecutive versions, signatures and thresholds,
// expiry of the latest, rollback against the serial file, and the cited
// receipt files. Any failure is trust_invalid or catalog_untrusted.
func Load(ctx context.Context, fsys fs.FS, dir string, opts Options) (*Catalog, error) {
	at := func(p string) string { return path.Join(dir, p) }
	tf := opts.Trust
	if tf == nil {
		data, err := fs.ReadFile(fsys, TrustFileName)
		if err != nil {
			return nil, trustErr(at(TrustFileName), "cannot read it: %v", err)
		}
		if opts.TrustSHA256 == "" || sha256Hex(data) != opts.TrustSHA256 {
			return nil, trustErr(at(TrustFileName), "sha256 %s is not the trust root this Fabric pins (%s); pass --trust FILE to use another", sha256Hex(data), opts.TrustSHA256)
		}
		sig, err := fs.ReadFile(fsys, TrustSigFileName)
		if err != nil {
			return nil, trustErr(at(TrustSigFileName), "cannot read it: %v", err)
		}
		tf = &TrustFile{Path: at(TrustFileName), Data: data, Sig: sig}
	}
	trust, err := VerifyTrust(tf.Path, tf.Data, tf.Sig, opts.Now)
	if err != nil {
		return nil, err
	}
	c := &Catalog{Dir: dir, Trust: trust}

	ents, err := fs.ReadDir(fsys, VersionsDir)
	if err != nil {
		return nil, untrusted(at(VersionsDir), "cannot list the versions: %v", err)
	}
	var serials []int
	for _, e := range ents {
		if m := versionName().FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			serials = append(serials, n)
		}
	}
	slices.Sort(serials)
	if len(serials) == 0 {
		return nil, untrusted(at(VersionsDir), "no catalog version")
	}
	for i, n := range serials {
		if n != i+1 {
			return nil, untrusted(at(VersionPath(n)), "serial gap: %s is missing", at(VersionPath(i+1)))
		}
	}
	var prev *Version
	for _, n := range serials {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := at(VersionPath(n))
		data, err := fs.ReadFile(fsys, VersionPath(n))
		if err != nil {
			return nil, untrusted(p, "cannot read it: %v", err)
		}
		v, err := ParseVersion(p, data)
		if err != nil {
			return nil, err
		}
		if v.Doc.Serial != n {
			return nil, untrusted(p, "serial %d in file %06d.json", v.Doc.Serial, n)
		}
		if prev != nil && v.Doc.Previous.SHA256 != prev.SHA256 {
			return nil, untrusted(p, "previous.sha256 %s is not the sha256 of %s (%s)", v.Doc.Previous.SHA256, prev.Path, prev.SHA256)
		}
		if err := CheckTransition(prev, v); err != nil {
			return nil, err
		}
		// The newest version is always checked.
		from := opts.SignaturesFrom
		if last := serials[len(serials)-1]; from == 0 || from > last {
			from = last
		}
		if n >= from {
			sig, err := fs.ReadFile(fsys, SigPath(n))
			if err != nil {
				return nil, untrusted(at(SigPath(n)), "cannot read the signature of %s (sign it with `fabric packages catalog sign %d`): %v", p, n, err)
			}
			if err := checkSigned(trust, prev, v, at(SigPath(n)), sig); err != nil {
				return nil, err
			}
		}
		c.Versions = append(c.Versions, v)
		prev = v
	}
	latest := c.Latest()
	if !opts.Now.Before(latest.Doc.Expires) {
		return nil, untrusted(latest.Path, "expired at %s", latest.Doc.Expires.Format(time.RFC3339))
	}
	if opts.SerialFile != "" {
		last, err := ReadSerial(opts.SerialFile)
		if err != nil {
			return nil, untrusted(latest.Path, "%v", err)
		}
		if latest.Doc.Serial < last {
			return nil, untrusted(latest.Path, "serial %d is older than serial %d this machine already accepted (%s): a rollback", latest.Doc.Serial, last, opts.SerialFile)
		}
	}
	if err := c.checkReceipts(ctx, fsys, opts.Receipts); err != nil {
		return nil, err
	}
	if opts.SerialFile != "" {
		if err := RecordSerial(opts.SerialFile, latest.Doc.Serial); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// checkSigned checks v's signature file: the catalog role's threshold, or
// the revoker role's when v only revokes. A publisher key never counts.
func checkSigned(trust *Trust, prev, v *Version, sigPath string, sig []byte) error {
	sf, err := ParseSignatureFile(sig)
	if err != nil {
		return untrusted(sigPath, "signature file: %v", err)
	}
	if sf.PayloadType != contract.CatalogPayloadType {
		return untrusted(sigPath, "payloadType %q, want %q", sf.PayloadType, contract.CatalogPayloadType)
	}
	var keys []attest.PublicKey
	for _, r := range Roles() {
		keys = append(keys, trust.Keys(r)...)
	}
	ver, _ := sf.verify(contract.CatalogPayloadType, v.Data, keys)
	if trust.Met(RoleCatalog, ver) {
		return nil
	}
	if trust.Met(RoleRevoker, ver) {
		if RevocationsOnly(prev, v) {
			return nil
		}
		return untrusted(sigPath, "signed by the revoker role only, but %s changes more than revocations", v.Path)
	}
	if n := ver.Count(trust.Role(RolePublisher).KeyIDs); n > 0 {
		return untrusted(sigPath, "signed by a publisher key: a publisher can never sign catalog changes (%d of %d catalog keys signed)", ver.Count(trust.Role(RoleCatalog).KeyIDs), trust.Role(RoleCatalog).Threshold)
	}
	return untrusted(sigPath, "%d distinct catalog keys signed %s, the threshold is %d", ver.Count(trust.Role(RoleCatalog).KeyIDs), v.Path, trust.Role(RoleCatalog).Threshold)
}

// checkReceipts checks that every receipt the latest version cites (for
// entries not revoked) exists with its digest, then runs rv on each.
func (c *Catalog) checkReceipts(ctx context.Context, fsys fs.FS, rv ReceiptVerifier) error {
	latest := c.Latest()
	for i := range latest.Doc.Entries {
		e := &latest.Doc.Entries[i]
		if e.State == contract.StateRevoked {
			continue
		}
		for _, plat := range slices.Sorted(mapKeys(e.Receipts)) {
			want := e.Receipts[plat].SHA256
			rel := ReceiptPath(want)
			data, err := fs.ReadFile(fsys, rel)
			if err != nil {
				return untrusted(latest.Path, "entry %s: receipts.%s: cannot read %s: %v", e.Entry, plat, path.Join(c.Dir, rel), err)
			}
			if got := sha256Hex(data); got != want {
				return untrusted(path.Join(c.Dir, rel), "sha256 %s, entry %s cites %s", got, e.Entry, want)
			}
			st := ReceiptStatus{Entry: e.Entry, Platform: plat, SHA256: want}
			if rv == nil {
				st.Problem = "receipt envelope not verified (no receipt verifier)"
			} else if err := rv.VerifyReceipt(ctx, Receipt{Entry: e, Platform: plat, Path: path.Join(c.Dir, rel), Envelope: data, Qualifiers: c.Trust.Keys(RoleQualifier), Threshold: c.Trust.Role(RoleQualifier).Threshold}); err != nil {
				st.Problem = err.Error()
			} else {
				st.Verified = true
			}
			c.Receipts = append(c.Receipts, st)
		}
	}
	return nil
}
