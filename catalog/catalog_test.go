package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/internal/attest"
	"github.com/fabric-runtime/fabric/internal/supportcatalog"
)

// The pinned digest is the committed trust.json's, and the built-in copy
// is the committed file.
func TestTrustDigestIsPinned(t *testing.T) {
	onDisk, err := os.ReadFile("trust.json")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(onDisk)
	if got := hex.EncodeToString(sum[:]); got != TrustSHA256 {
		t.Fatalf("catalog/trust.json has sha256 %s but TrustSHA256 is %s: a trust rotation must update the constant", got, TrustSHA256)
	}
	embedded, err := fs.ReadFile(FS(), "trust.json")
	if err != nil || !bytes.Equal(embedded, onDisk) {
		t.Fatalf("the built-in trust.json differs from the file: %v", err)
	}
}

// The project's catalog verifies as built in, every signature included.
func TestBuiltInCatalogVerifies(t *testing.T) {
	c, err := supportcatalog.Load(context.Background(), FS(), "catalog", supportcatalog.Options{Now: time.Now(), TrustSHA256: TrustSHA256, SignaturesFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Trust.Doc.Roles.Catalog.Threshold != 1 {
		t.Errorf("the test catalog's threshold is %d", c.Trust.Doc.Roles.Catalog.Threshold)
	}
	// A month of margin, so CI learns of expiry before it fails.
	if soon := time.Now().AddDate(0, 1, 0); !soon.Before(c.Latest().Doc.Expires) || !soon.Before(c.Trust.Doc.Expires) {
		t.Errorf("the catalog (%s) or its trust root (%s) expires within a month: propose a new version", c.Latest().Doc.Expires, c.Trust.Doc.Expires)
	}
}

// Each test key holds the role its file is named for, and only it.
func TestTestKeysHoldTheirRoles(t *testing.T) {
	data, _ := os.ReadFile("trust.json")
	tr, err := supportcatalog.ParseTrust("trust.json", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range supportcatalog.Roles() {
		pub, role, err := attest.ReadPublicKey("testkeys/" + string(r) + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		if role != string(r) || !slices.Contains(tr.Role(r).KeyIDs, pub.ID) {
			t.Errorf("testkeys/%s.pub (role %q, %s) is not a %s key of trust.json", r, role, pub.ID, r)
		}
		for _, other := range supportcatalog.Roles() {
			if other != r && slices.Contains(tr.Role(other).KeyIDs, pub.ID) {
				t.Errorf("testkeys/%s.pub also holds %s", r, other)
			}
		}
	}
}
