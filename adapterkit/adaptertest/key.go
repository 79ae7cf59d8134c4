package adaptertest

import (
	"crypto/rand"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
)

// auditedKey is key, or a fresh one when key is empty, recorded in the
// token ledger (harnessui.RecordForAudit) so that a scan of the test output
// for secrets looks for it.
func auditedKey(key string) string {
	if key == "" {
		key = "sk-fabric-test-" + rand.Text()
	}
	harnessui.RecordForAudit(key)
	return key
}
