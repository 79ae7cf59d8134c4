package receipt

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/supportcatalog"
)

// CatalogVerifier verifies the receipts a support catalog cites
// (supportcatalog.ReceiptVerifier): the envelope signed by at least the
// qualifier threshold, its subjects equal to the entry's package,
// descriptor and artifact digests (a catalog artifact's name is the
// receipt subject's, e.g. npm:NAME@VERSION), its platform the one cited,
// its verdict qualified by the rule, and, when the entry says
// observed_all, every item with an observable postcondition observed and
// agreeing.
func CatalogVerifier() supportcatalog.ReceiptVerifier {
	return supportcatalog.ReceiptVerifierFunc(verifyCatalogReceipt)
}

func verifyCatalogReceipt(_ context.Context, r supportcatalog.Receipt) error {
	st, v, err := OpenReceipt(r.Envelope, r.Qualifiers)
	if err != nil {
		return err
	}
	ids := make([]string, len(r.Qualifiers))
	for i, k := range r.Qualifiers {
		ids[i] = k.ID
	}
	if n := v.Count(ids); n < r.Threshold {
		return receiptError(CodeReceiptUnverifiable, fmt.Sprintf("%s is signed by %d qualifier key(s), the threshold is %d", r.Path, n, r.Threshold), nil)
	}
	e := r.Entry
	problems := Check(st, Expectation{
		PackageID: e.Package.ID, PackageVersion: e.Package.Version,
		PackageSHA256: e.PackageDigest.SHA256, DescriptorSHA256: e.Descriptor.SHA256, Platform: r.Platform,
	})
	subj := map[string]map[string]string{}
	for _, s := range st.Subject {
		subj[s.Name] = s.Digest
	}
	for _, a := range e.Artifacts[r.Platform] {
		if got, ok := subj[a.Name]; !ok || !maps.Equal(got, a.Digest) {
			problems = append(problems, fmt.Sprintf("no subject %s with the entry's digest", a.Name))
		}
	}
	if e.Receipts[r.Platform].ObservedAll {
		for _, it := range st.Predicate.Results {
			if contract.ObservedResult(it.ID) && it.Verdict == contract.QualificationPass && (it.Observation == nil || !it.Observation.Agrees) {
				problems = append(problems, fmt.Sprintf("the entry says observed_all but item %s %s has no agreeing observation", it.ID, it.Name))
			}
		}
	}
	if len(problems) > 0 {
		return receiptError(CodePackageUnqualified, r.Path+": "+strings.Join(problems, "; "), nil)
	}
	return nil
}
