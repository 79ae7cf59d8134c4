package modelproxy

import "github.com/fabric-runtime/fabric/adapterkit/harnessui"

// RecordForAudit records token in the test suite's token ledger (see
// harnessui.RecordForAudit, the one implementation): Grant records every
// placeholder it issues, and tests of packages that embed the proxy record
// the fake provider keys they make.
func RecordForAudit(token string) { harnessui.RecordForAudit(token) }
