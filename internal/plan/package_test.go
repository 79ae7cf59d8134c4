package plan

import (
	"errors"
	"slices"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
)

// selectorFunc adapts a function to PackageSelector: the plan's hook is
// under test here, not the catalog's decision (internal/supportcatalog).
type selectorFunc func(string, *catalog.Entry) (*contract.PackageSelection, error)

func (f selectorFunc) SelectPackage(req string, e *catalog.Entry) (*contract.PackageSelection, error) {
	return f(req, e)
}

func TestPackageSelectionInPlan(t *testing.T) {
	chosen := &contract.PackageSelection{Requested: "test.open@1", Entry: "test.open@1", CatalogSerial: 7, PackageDigest: "ab", State: "supported", Platform: "linux-x86_64"}
	refuse := &contract.ConfigError{Failure: contract.Failure{Stage: contract.StagePlan, Code: "package_revoked", Path: "harness.package", Message: "revoked"}}
	for _, tc := range []struct {
		name     string
		pkg      string
		sel      PackageSelector
		want     *contract.PackageSelection
		wantCode string
	}{
		{"no package: the selector is not asked", "", selectorFunc(func(string, *catalog.Entry) (*contract.PackageSelection, error) {
			t.Error("selector asked for a config without harness.package")
			return nil, nil
		}), nil, ""},
		{"no selector fails closed", "test.open@1", nil, nil, CodePackageSelectionUnavailable},
		{"selected", "test.open@1", selectorFunc(func(req string, e *catalog.Entry) (*contract.PackageSelection, error) {
			if req != "test.open@1" || e.Descriptor.AdapterID != "test.open" {
				t.Errorf("asked for %q with adapter %q", req, e.Descriptor.AdapterID)
			}
			return chosen, nil
		}), chosen, ""},
		{"refused", "test.open", selectorFunc(func(string, *catalog.Entry) (*contract.PackageSelection, error) { return nil, refuse }), nil, "package_revoked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig("test.open")
			cfg.Harness.Package = tc.pkg
			p, err := Resolve(cfg, Options{BaseDir: "/base", Catalog: testCatalog(t), Packages: tc.sel})
			if tc.wantCode != "" {
				if !slices.Contains(findings(err), finding{tc.wantCode, "harness.package"}) {
					t.Fatalf("findings %v, want %s at harness.package", findings(err), tc.wantCode)
				}
				var ce *contract.ConfigError
				if !errors.As(err, &ce) {
					t.Fatalf("error %T", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Package != tc.want {
				t.Errorf("plan package = %+v, want %+v", p.Package, tc.want)
			}
		})
	}
}
