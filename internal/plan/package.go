package plan

import (
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
)

// PackageSelector decides whether the package a config names
// (harness.package) may run, against the support catalog: it returns the
// decision to record in the plan, or a *contract.ConfigError with a stable
// package_* code that lists the selectable alternatives. It never picks
// another package than the one asked for.
type PackageSelector interface {
	SelectPackage(requested string, adapter *catalog.Entry) (*contract.PackageSelection, error)
}

// CodePackageSelectionUnavailable is the code of a config that names a
// package when the program planning it has no support catalog to check
// it against: the plan fails closed.
const CodePackageSelectionUnavailable = "package_selection_unavailable"

// selectPackage records the catalog decision for harness.package.
func (r *resolver) selectPackage(p *contract.RunPlan, sel PackageSelector) {
	req := r.cfg.Harness.Package
	if req == "" {
		return
	}
	if sel == nil {
		r.fail(CodePackageSelectionUnavailable, "harness.package", "harness.package names "+req+" but this program has no support catalog to select it with; use the fabric CLI or give the client a package selector")
		return
	}
	s, err := sel.SelectPackage(req, r.entry)
	if err != nil {
		r.errs = append(r.errs, err)
		return
	}
	p.Package = s
}
