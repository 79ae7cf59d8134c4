package cli

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing/fstest"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cliflag"

	projectcatalog "github.com/fabric-runtime/fabric/catalog"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/pkgdesc"
	"github.com/fabric-runtime/fabric/internal/receipt"
	sc "github.com/fabric-runtime/fabric/internal/supportcatalog"
	"github.com/fabric-runtime/fabric/internal/treemanifest"
)

// packagesCatalogCommands are `fabric packages keygen`, `catalog ...`
// and `status`: keys, the signed support catalog and its state.
func (a *app) packagesCatalogCommands() []*cobra.Command {
	cat := &cobra.Command{Use: "catalog", Short: "Create, propose, sign and verify versions of the support catalog"}
	cat.AddCommand(a.catalogInitCommand(), a.catalogProposeCommand(), a.catalogSignCommand(), a.catalogVerifyCommand())
	return []*cobra.Command{a.keygenCommand(), cat, a.packagesStatusCommand()}
}

// catalogFlags choose the catalog and trust root a verb reads.
type catalogFlags struct {
	dir, trust, serialFile string
}

func (f *catalogFlags) register(cmd *cobra.Command, needDir bool) {
	usage := "catalog directory (default: the catalog built into fabric)"
	if needDir {
		usage = "catalog directory"
	}
	cmd.Flags().StringVar(&f.dir, "dir", "", usage)
	if needDir {
		_ = cmd.MarkFlagRequired("dir")
	}
	cmd.Flags().StringVar(&f.trust, "trust", "", "trust root to verify with instead of the one fabric pins (for tests); its signature is the .sig.json beside it")
	cmd.Flags().StringVar(&f.serialFile, "serial-file", "", "where the last accepted serial is kept (default $XDG_STATE_HOME/fabric/catalog.serial)")
}

func (f *catalogFlags) fs() (fs.FS, string) {
	if f.dir == "" {
		return projectcatalog.FS(), "catalog (built in)"
	}
	return os.DirFS(f.dir), f.dir
}

func (f *catalogFlags) options() (sc.Options, error) {
	opts := sc.Options{Now: time.Now(), TrustSHA256: projectcatalog.TrustSHA256}
	if f.trust != "" {
		data, err := os.ReadFile(f.trust)
		if err != nil {
			return opts, fmt.Errorf("--trust: %w", err)
		}
		sigPath := sigBeside(f.trust)
		sig, err := os.ReadFile(sigPath)
		if err != nil {
			return opts, fmt.Errorf("--trust: its signature: %w", err)
		}
		opts.Trust = &sc.TrustFile{Path: f.trust, Data: data, Sig: sig}
	}
	opts.SerialFile = f.serialFile
	if opts.SerialFile == "" {
		p, err := sc.SerialFile(os.Getenv)
		if err != nil {
			return opts, err
		}
		opts.SerialFile = p
	}
	return opts, nil
}

func sigBeside(p string) string { return strings.TrimSuffix(p, ".json") + ".sig.json" }

func (a *app) loadCatalog(ctx context.Context, f *catalogFlags, edit func(*sc.Options)) (*sc.Catalog, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	if edit != nil {
		edit(&opts)
	}
	fsys, dir := f.fs()
	return sc.Load(ctx, fsys, dir, opts)
}

func (a *app) keygenCommand() *cobra.Command {
	var role, out string
	cmd := &cobra.Command{
		Use:   "keygen --role ROLE --out FILE",
		Short: "Make an ed25519 key pair for a catalog role: FILE (mode 0600) and FILE's .pub beside it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(sc.Roles(), sc.Role(role)) {
				return &exitError{code: ExitUsage, err: fmt.Errorf("--role %q: want one of root, catalog, revoker, qualifier, publisher", role)}
			}
			k, err := attest.GenerateKey(role)
			if err != nil {
				return err
			}
			pubPath := strings.TrimSuffix(out, ".key") + ".pub"
			pub, err := attest.MarshalPublicKey(k.Public(), role)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
				return a.failure(err)
			}
			if err := attest.WritePrivateKey(out, k); err != nil {
				return a.failure(err)
			}
			if err := writeNew(pubPath, pub, 0o644); err != nil {
				return a.failure(err)
			}
			if a.output == "text" {
				fmt.Fprintln(a.stdio.Out, k.ID)
				return nil
			}
			return a.writeJSON(map[string]any{"keyid": k.ID, "role": role, "private": out, "public": pubPath})
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "root, catalog, revoker, qualifier or publisher")
	cmd.Flags().StringVar(&out, "out", "", "private key file to write (never overwritten)")
	_ = cmd.MarkFlagRequired("role")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// parseWhen reads a date (YYYY-MM-DD, RFC 3339) or a duration from now
// (90d, 2160h).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err == nil {
			return now.AddDate(0, 0, n).UTC().Truncate(time.Second), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d).UTC().Truncate(time.Second), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

func (a *app) catalogInitCommand() *cobra.Command {
	var dir, expires, versionExpires string
	var signers, thresholds []string
	roleKeys := map[sc.Role]*[]string{}
	cmd := &cobra.Command{
		Use:   "init --dir DIR --root PUB --catalog PUB --revoker PUB --qualifier PUB --publisher PUB --sign ROOTKEY",
		Short: "Write a first trust.json from public key files and thresholds, signed by root keys, and an empty version 1 (unsigned)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			exp, err := parseWhen(expires, now)
			if err != nil {
				return &exitError{code: ExitUsage, err: fmt.Errorf("--expires: %v", err)}
			}
			vexp, err := parseWhen(versionExpires, now)
			if err != nil {
				return &exitError{code: ExitUsage, err: fmt.Errorf("--version-expires: %v", err)}
			}
			doc := contract.Trust{Type: contract.TrustV1Alpha1, Version: 1, Expires: exp, Keys: map[string]contract.TrustKey{}}
			roles := map[sc.Role]*contract.TrustRole{sc.RoleRoot: &doc.Roles.Root, sc.RoleCatalog: &doc.Roles.Catalog, sc.RoleRevoker: &doc.Roles.Revoker, sc.RoleQualifier: &doc.Roles.Qualifier, sc.RolePublisher: &doc.Roles.Publisher}
			for _, r := range sc.Roles() {
				for _, p := range *roleKeys[r] {
					pub, _, err := attest.ReadPublicKey(p)
					if err != nil {
						return a.failure(err)
					}
					doc.Keys[pub.ID] = contract.TrustKey{Alg: "ed25519", Public: pub.Key}
					roles[r].KeyIDs = append(roles[r].KeyIDs, pub.ID)
				}
				roles[r].Threshold = 1
			}
			for _, th := range thresholds {
				r, n, ok := strings.Cut(th, "=")
				v, err := strconv.Atoi(n)
				if !ok || err != nil || roles[sc.Role(r)] == nil {
					return &exitError{code: ExitUsage, err: fmt.Errorf("--threshold %q: want ROLE=N", th)}
				}
				roles[sc.Role(r)].Threshold = v
			}
			data, err := marshalDoc(doc)
			if err != nil {
				return err
			}
			trustPath := filepath.Join(dir, sc.TrustFileName)
			if _, err := sc.ParseTrust(trustPath, data); err != nil {
				return a.failure(err)
			}
			var sig *sc.SignatureFile
			for _, kf := range signers {
				k, err := attest.ReadPrivateKey(kf)
				if err != nil {
					return a.failure(err)
				}
				if sig, err = sc.Sign(sig, contract.TrustPayloadType, data, k); err != nil {
					return err
				}
			}
			sigData, err := sig.Marshal()
			if err != nil {
				return err
			}
			if _, err := sc.VerifyTrust(trustPath, data, sigData, now); err != nil {
				return a.failure(err)
			}
			v1, err := marshalDoc(contract.SupportCatalog{Type: contract.CatalogV1Alpha1, Serial: 1, Issued: now.UTC().Truncate(time.Second), Expires: vexp, Defaults: map[string]string{}, Entries: []contract.CatalogEntry{}})
			if err != nil {
				return err
			}
			for _, d := range []string{sc.VersionsDir, "receipts"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					return a.failure(err)
				}
			}
			for _, w := range []struct {
				rel  string
				data []byte
			}{{sc.TrustFileName, data}, {sc.TrustSigFileName, sigData}, {sc.VersionPath(1), v1}} {
				if err := writeNew(filepath.Join(dir, w.rel), w.data, 0o644); err != nil {
					return a.failure(err)
				}
			}
			return a.writeJSON(map[string]any{"status": "ok", "trust": trustPath, "trust_sha256": sha256Hex(data), "version": filepath.Join(dir, sc.VersionPath(1)), "next": "fabric packages catalog sign 1 --key CATALOG_KEY"})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "catalog directory to create")
	for _, r := range sc.Roles() {
		keys := new([]string)
		roleKeys[r] = keys
		cliflag.Strings(cmd.Flags(), keys, string(r), fmt.Sprintf("public key file of a %s key (repeatable)", r))
		_ = cmd.MarkFlagRequired(string(r))
	}
	cliflag.Strings(cmd.Flags(), &thresholds, "threshold", "ROLE=N: how many distinct keys of ROLE must sign (default 1; repeatable)")
	cliflag.Strings(cmd.Flags(), &signers, "sign", "root private key that signs trust.json (repeatable)")
	cmd.Flags().StringVar(&expires, "expires", "365d", "when the trust root expires: a date, RFC 3339 time or a duration such as 365d")
	cmd.Flags().StringVar(&versionExpires, "version-expires", "90d", "when version 1 expires")
	_ = cmd.MarkFlagRequired("dir")
	_ = cmd.MarkFlagRequired("sign")
	return cmd
}

func marshalDoc(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// latestVersion reads the newest version of dir, structurally checked.
func latestVersion(dir string) (*sc.Version, error) {
	ents, err := os.ReadDir(filepath.Join(dir, sc.VersionsDir))
	if err != nil {
		return nil, err
	}
	n := 0
	for _, e := range ents {
		if s, ok := strings.CutSuffix(e.Name(), ".json"); ok && !strings.HasSuffix(s, ".sig") {
			if v, err := strconv.Atoi(s); err == nil {
				n = max(n, v)
			}
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no catalog version", filepath.Join(dir, sc.VersionsDir))
	}
	p := filepath.Join(dir, sc.VersionPath(n))
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return sc.ParseVersion(p, data)
}

// entryOf is the candidate catalog entry of a package: its identity and
// every digest it pins (a catalog artifact is named as its receipt
// subject, kind:name@version).
func entryOf(p *pkgdesc.Package) contract.CatalogEntry {
	d := &p.Descriptor
	e := contract.CatalogEntry{
		Entry:         p.ID() + "@" + p.Version(),
		Package:       contract.CatalogPackage{ID: p.ID(), Version: p.Version(), Publisher: d.Package.Publisher, Contract: d.ContractVersion},
		PackageDigest: contract.DigestSet{SHA256: strings.TrimPrefix(p.Digest(), treemanifest.Prefix)},
		Descriptor:    contract.DigestSet{SHA256: p.AdapterSHA256},
		Runtime:       d.Runtime, Source: d.Source, Requires: d.Requires,
		Artifacts: map[string][]contract.CatalogArtifact{},
		State:     contract.StateCandidate,
	}
	for plat, arts := range d.Artifacts {
		for _, a := range arts {
			e.Artifacts[plat] = append(e.Artifacts[plat], contract.CatalogArtifact{Name: receipt.ArtifactSubject(a), Digest: a.Digest})
		}
	}
	if len(e.Artifacts) == 0 {
		// A package with nothing to install (a built-in adapter) still
		// names the platform it was qualified on.
		e.Artifacts[pkgdesc.HostPlatform()] = []contract.CatalogArtifact{}
	}
	return e
}

// observedAll reports whether the receipt file's statement observed,
// with agreement, every item that has an observable postcondition (what
// promotion to supported requires). The signature is checked when the
// catalog is.
func observedAll(file string) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	env, err := attest.ParseEnvelope(data)
	if err != nil {
		return false
	}
	st, err := receipt.ParseStatement(env.Payload)
	if err != nil {
		return false
	}
	for _, it := range st.Predicate.Results {
		if conformance.Observable(it.ID) && it.Verdict == contract.QualificationPass && (it.Observation == nil || !it.Observation.Agrees) {
			return false
		}
	}
	return true
}

func (a *app) catalogProposeCommand() *cobra.Command {
	var dir, add, addPackage, promote, state, reason, requalifyBy, supersede, by, sunset, revoke, running, expires string
	var evidence, defaults, receipts []string
	cmd := &cobra.Command{
		Use:   "propose --dir DIR (--add FILE.json | --add-package ID|PATH | --promote ENTRY --state S | --supersede ENTRY --by ENTRY --sunset DATE | --revoke ENTRY --reason R --running P --evidence SHA256 | --default ID=ENTRY)",
		Short: "Write catalog version N+1, unsigned, after checking the transition from N",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prev, err := latestVersion(dir)
			if err != nil {
				return a.failure(err)
			}
			now := time.Now().UTC()
			var doc contract.SupportCatalog
			if err := json.Unmarshal(prev.Data, &doc); err != nil {
				return err
			}
			doc.Serial++
			doc.Previous = &contract.DigestSet{SHA256: prev.SHA256}
			doc.Issued = now.Truncate(time.Second)
			today := now.Format("2006-01-02")
			if expires != "" {
				if doc.Expires, err = parseWhen(expires, now); err != nil {
					return &exitError{code: ExitUsage, err: fmt.Errorf("--expires: %v", err)}
				}
			}
			find := func(name string) (*contract.CatalogEntry, error) {
				for i := range doc.Entries {
					if doc.Entries[i].Entry == name {
						return &doc.Entries[i], nil
					}
				}
				return nil, fmt.Errorf("catalog serial %d has no entry %s", prev.Doc.Serial, name)
			}
			changes := 0
			if add != "" || addPackage != "" {
				changes++
				var e contract.CatalogEntry
				if addPackage != "" {
					pkg, _, err := findPackage(addPackage, nil)
					if err != nil {
						return a.failure(err)
					}
					e = entryOf(pkg)
				} else {
					data, err := os.ReadFile(add)
					if err != nil {
						return a.failure(err)
					}
					dec := json.NewDecoder(bytes.NewReader(data))
					dec.DisallowUnknownFields()
					if err := dec.Decode(&e); err != nil {
						return a.failure(fmt.Errorf("%s: not a catalog entry: %w", add, err))
					}
				}
				if e.Since == "" {
					e.Since = today
				}
				for _, r := range receipts {
					plat, file, ok := strings.Cut(r, "=")
					if !ok {
						return &exitError{code: ExitUsage, err: fmt.Errorf("--receipt %q: want PLATFORM=FILE", r)}
					}
					sum, err := storeReceipt(dir, file)
					if err != nil {
						return a.failure(err)
					}
					if e.Receipts == nil {
						e.Receipts = map[string]contract.CatalogReceipt{}
					}
					rc := e.Receipts[plat]
					rc.SHA256 = sum
					if addPackage != "" {
						rc.ObservedAll = observedAll(file)
					}
					e.Receipts[plat] = rc
				}
				doc.Entries = append(doc.Entries, e)
			}
			if promote != "" {
				changes++
				e, err := find(promote)
				if err != nil {
					return a.failure(err)
				}
				// The transition check says whether leaving a revoked
				// or superseded state is legal (it never is).
				e.State, e.Since, e.Reason = state, today, reason
				e.SupersededBy, e.Sunset, e.Revocation = "", "", nil
				if requalifyBy != "" {
					e.RequalifyBy = requalifyBy
				}
			}
			if supersede != "" {
				changes++
				e, err := find(supersede)
				if err != nil {
					return a.failure(err)
				}
				e.State, e.Since, e.SupersededBy, e.Sunset = contract.StateSuperseded, today, by, sunset
			}
			if revoke != "" {
				changes++
				e, err := find(revoke)
				if err != nil {
					return a.failure(err)
				}
				r := &contract.CatalogRevocation{Reason: reason, Running: running}
				for _, ev := range evidence {
					r.Evidence = append(r.Evidence, contract.DigestSet{SHA256: strings.TrimPrefix(ev, "sha256:")})
				}
				e.State, e.Since, e.SupersededBy, e.Sunset, e.Revocation = contract.StateRevoked, today, "", "", r
			}
			for _, d := range defaults {
				changes++
				id, name, ok := strings.Cut(d, "=")
				if !ok {
					return &exitError{code: ExitUsage, err: fmt.Errorf("--default %q: want ID=ENTRY", d)}
				}
				if doc.Defaults == nil {
					doc.Defaults = map[string]string{}
				}
				doc.Defaults[id] = name
			}
			if changes == 0 && expires == "" {
				return &exitError{code: ExitUsage, err: errors.New("nothing to propose: give --add, --promote, --supersede, --revoke, --default or --expires")}
			}
			data, err := marshalDoc(doc)
			if err != nil {
				return err
			}
			p := filepath.Join(dir, sc.VersionPath(doc.Serial))
			next, err := sc.ParseVersion(p, data)
			if err != nil {
				return a.failure(err)
			}
			if err := sc.CheckTransition(prev, next); err != nil {
				return a.failure(err)
			}
			if err := writeNew(p, data, 0o644); err != nil {
				return a.failure(err)
			}
			return a.writeJSON(map[string]any{"status": "proposed", "serial": doc.Serial, "version": p, "sha256": next.SHA256, "revocations_only": sc.RevocationsOnly(prev, next), "next": fmt.Sprintf("fabric packages catalog sign %d --key KEY", doc.Serial)})
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", "", "catalog directory")
	f.StringVar(&add, "add", "", "catalog entry (JSON) to list as a candidate")
	f.StringVar(&addPackage, "add-package", "", "list this package (an ID built in, or a package directory) as a candidate, with every digest it pins taken from it")
	cliflag.Strings(f, &receipts, "receipt", "with --add: PLATFORM=FILE, a receipt envelope to copy into receipts/ and cite (repeatable)")
	f.StringVar(&promote, "promote", "", "entry to move to --state")
	f.StringVar(&state, "state", "", "with --promote: compatible or supported")
	f.StringVar(&reason, "reason", "", "why: required for supported -> compatible and for --revoke (security, digest_mismatch, receipt_invalid, upstream_yanked, key_compromise, contract_broken)")
	f.StringVar(&requalifyBy, "requalify-by", "", "with --promote: the date (YYYY-MM-DD) it must be qualified again by")
	f.StringVar(&supersede, "supersede", "", "entry to mark superseded")
	f.StringVar(&by, "by", "", "with --supersede: the successor entry")
	f.StringVar(&sunset, "sunset", "", "with --supersede: the date (YYYY-MM-DD) after which it counts as revoked")
	f.StringVar(&revoke, "revoke", "", "entry to revoke")
	f.StringVar(&running, "running", "", "with --revoke: what running deployments do: continue, drain or stop")
	cliflag.Strings(f, &evidence, "evidence", "with --revoke: sha256 of the evidence (repeatable)")
	cliflag.Strings(f, &defaults, "default", "ID=ENTRY: the entry a bare ID selects (repeatable)")
	f.StringVar(&expires, "expires", "", "when the new version expires (default: as version N)")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

// storeReceipt copies a receipt envelope into dir's receipts/, named by
// its sha256, and returns the digest. A receipt already there must have
// the same bytes (it always has: the name is the digest).
func storeReceipt(dir, file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	sum := sha256Hex(data)
	p := filepath.Join(dir, sc.ReceiptPath(sum))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	if err := writeNew(p, data, 0o644); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	return sum, nil
}

func (a *app) catalogSignCommand() *cobra.Command {
	var dir, key string
	cmd := &cobra.Command{
		Use:   "sign N|trust --dir DIR --key FILE",
		Short: "Add a signature to catalog version N (or to trust.json) in its detached .sig.json",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rel, sigRel, typ := sc.TrustFileName, sc.TrustSigFileName, contract.TrustPayloadType
			if args[0] != "trust" {
				n, err := strconv.Atoi(args[0])
				if err != nil || n < 1 {
					return &exitError{code: ExitUsage, err: fmt.Errorf("sign %q: give a serial or trust", args[0])}
				}
				rel, sigRel, typ = sc.VersionPath(n), sc.SigPath(n), contract.CatalogPayloadType
			}
			k, err := attest.ReadPrivateKey(key)
			if err != nil {
				return a.failure(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil {
				return a.failure(err)
			}
			var sig *sc.SignatureFile
			sigPath := filepath.Join(dir, sigRel)
			if old, err := os.ReadFile(sigPath); err == nil {
				if sig, err = sc.ParseSignatureFile(old); err != nil {
					return a.failure(fmt.Errorf("%s: %w", sigPath, err))
				}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return a.failure(err)
			}
			if sig, err = sc.Sign(sig, typ, data, k); err != nil {
				return a.failure(err)
			}
			out, err := sig.Marshal()
			if err != nil {
				return err
			}
			if err := os.WriteFile(sigPath, out, 0o644); err != nil {
				return a.failure(err)
			}
			return a.writeJSON(map[string]any{"status": "signed", "file": filepath.Join(dir, rel), "signature": sigPath, "keyid": k.ID, "role": k.Role, "signatures": len(sig.Signatures)})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "catalog directory")
	cmd.Flags().StringVar(&key, "key", "", "private key file")
	_ = cmd.MarkFlagRequired("dir")
	_ = cmd.MarkFlagRequired("key")
	return cmd
}

func (a *app) catalogVerifyCommand() *cobra.Command {
	var f catalogFlags
	var since string
	var all bool
	cmd := &cobra.Command{
		Use:   "verify [--dir DIR] [--since DIR|REF] [--all] [--trust FILE]",
		Short: "Verify the catalog: trust, chain, signatures and thresholds, transitions, expiry, rollback, receipts; with --since, append-only",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			from := 0
			if all {
				from = 1
			}
			if since != "" {
				base, label, err := baseCatalog(ctx, since, f.dir)
				if err != nil {
					return a.failure(err)
				}
				cur, dir := f.fs()
				last, err := sc.CheckAppendOnly(base, label, cur, dir, time.Now())
				if err != nil {
					return a.failure(err)
				}
				if !all {
					from = last + 1
				}
			}
			c, err := a.loadCatalog(ctx, &f, func(o *sc.Options) {
				o.SignaturesFrom = from
				o.Receipts = a.receiptVerifier()
			})
			if err != nil {
				return a.failure(err)
			}
			latest := c.Latest()
			return a.writeJSON(map[string]any{"status": "verified", "serial": latest.Doc.Serial, "sha256": latest.SHA256, "expires": latest.Doc.Expires, "trust_sha256": c.Trust.SHA256, "trust_version": c.Trust.Doc.Version, "entries": len(latest.Doc.Entries), "receipts": c.Receipts})
		},
	}
	f.register(cmd, false)
	cmd.Flags().StringVar(&since, "since", "", "base copy of the catalog (a directory, or a git revision of the catalog directory): every file in it must be unchanged, and the versions added since are signature-checked")
	cmd.Flags().BoolVar(&all, "all", false, "check the signature of every version, not only the newest")
	return cmd
}

// receiptVerifier is the verifier of the receipt envelopes a catalog
// cites: the qualification rules (internal/qualify).
func (a *app) receiptVerifier() sc.ReceiptVerifier { return receipt.CatalogVerifier() }

// baseCatalog is the --since base: a directory, or the catalog directory
// at a git revision (read with git archive).
func baseCatalog(ctx context.Context, since, dir string) (fs.FS, string, error) {
	if st, err := os.Stat(since); err == nil && st.IsDir() {
		return os.DirFS(since), since, nil
	}
	if dir == "" {
		return nil, "", fmt.Errorf("--since %s: a git revision needs --dir (the catalog directory in a git checkout)", since)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	top, err := exec.CommandContext(ctx, "git", "-C", abs, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return nil, "", fmt.Errorf("--since %s: not a directory, and %s is not in a git checkout: %v", since, dir, err)
	}
	root := strings.TrimSpace(string(top))
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, "", err
	}
	rel = filepath.ToSlash(rel)
	m := fstest.MapFS{}
	label := since + ":" + rel
	// A revision without the catalog directory is an empty base: the
	// catalog is new.
	listed, err := exec.CommandContext(ctx, "git", "-C", root, "ls-tree", "-d", since, "--", rel).Output()
	if err != nil {
		return nil, "", fmt.Errorf("--since %s: not a directory nor a git revision: %v", since, err)
	}
	if len(bytes.TrimSpace(listed)) == 0 {
		return m, label, nil
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", since, "--", rel)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("--since %s: git archive of %s: %v: %s", since, rel, err, strings.TrimSpace(stderr.String()))
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("--since %s: %v", since, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, "", err
		}
		if name, ok := strings.CutPrefix(h.Name, rel+"/"); ok {
			m[name] = &fstest.MapFile{Data: b, Mode: 0o644}
		}
	}
	return m, label, nil
}

func (a *app) packagesStatusCommand() *cobra.Command {
	var f catalogFlags
	cmd := &cobra.Command{
		Use:   "status [--dir DIR] [--trust FILE]",
		Short: "Show the support catalog in force: serial, expiry, entries and their states",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.loadCatalog(cmd.Context(), &f, func(o *sc.Options) { o.Receipts = a.receiptVerifier() })
			if err != nil {
				return a.failure(err)
			}
			latest := c.Latest()
			type entry struct {
				Entry       string                      `json:"entry"`
				State       string                      `json:"state"`
				Since       string                      `json:"since"`
				RequalifyBy string                      `json:"requalify_by,omitempty"`
				Expired     bool                        `json:"expired,omitempty"`
				Default     bool                        `json:"default,omitempty"`
				Successor   string                      `json:"superseded_by,omitempty"`
				Sunset      string                      `json:"sunset,omitempty"`
				Revocation  *contract.CatalogRevocation `json:"revocation,omitempty"`
				Platforms   []string                    `json:"platforms"`
			}
			now := time.Now()
			var entries []entry
			for _, e := range latest.Doc.Entries {
				out := entry{Entry: e.Entry, State: e.State, Since: e.Since, RequalifyBy: e.RequalifyBy, Default: latest.Doc.Defaults[e.Package.ID] == e.Entry, Successor: e.SupersededBy, Sunset: e.Sunset, Revocation: e.Revocation, Platforms: slices.Sorted(func(y func(string) bool) {
					for p := range e.Receipts {
						if !y(p) {
							return
						}
					}
				})}
				if t, err := time.Parse("2006-01-02", e.RequalifyBy); err == nil && !now.Before(t.AddDate(0, 0, 1)) {
					out.Expired = true
				}
				entries = append(entries, out)
			}
			if a.output == "text" {
				fmt.Fprintf(a.stdio.Out, "catalog serial %d, expires %s, trust version %d (sha256 %s)\n", latest.Doc.Serial, latest.Doc.Expires.Format(time.RFC3339), c.Trust.Doc.Version, c.Trust.SHA256)
				for _, e := range entries {
					fmt.Fprintf(a.stdio.Out, "%s\t%s\tsince %s\n", e.Entry, e.State, e.Since)
				}
				return nil
			}
			return a.writeJSON(map[string]any{"serial": latest.Doc.Serial, "issued": latest.Doc.Issued, "expires": latest.Doc.Expires, "trust_version": c.Trust.Doc.Version, "trust_sha256": c.Trust.SHA256, "entries": entries})
		},
	}
	f.register(cmd, false)
	return cmd
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
