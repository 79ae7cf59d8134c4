package contract_test

import (
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func TestValidateInterfaceDeclarations(t *testing.T) {
	good := []contract.InterfaceDeclaration{
		{Name: "dashboard", Kind: contract.InterfaceHTTP, Browser: true, PublicOrigins: true, Credential: contract.CredentialBearer,
			Lifecycles: []string{contract.InterfaceLifecycleRuntime}, HealthLevels: []string{contract.LevelLive, contract.LevelReady}},
		{Name: "terminal", Kind: contract.InterfaceTerminal, Settings: map[string]any{"theme": map[string]any{}}},
	}
	if err := contract.ValidateInterfaceDeclarations(good); err != nil {
		t.Fatal(err)
	}
	d := contract.AdapterDescriptor{Interfaces: good}
	if in, ok := d.Interface("terminal"); !ok || in.Kind != contract.InterfaceTerminal {
		t.Errorf("Interface(terminal) = %+v, %v", in, ok)
	}
	if _, ok := d.Interface("api"); ok {
		t.Error("Interface(api) found")
	}
	for name, tc := range map[string]struct {
		decl contract.InterfaceDeclaration
		want string
	}{
		"bad name":            {contract.InterfaceDeclaration{Name: "../x", Kind: "http"}, "name"},
		"duplicate":           {contract.InterfaceDeclaration{Name: "dashboard", Kind: "http"}, "twice"},
		"kind":                {contract.InterfaceDeclaration{Name: "x", Kind: "stdio"}, "kind"},
		"credential":          {contract.InterfaceDeclaration{Name: "x", Kind: "http", Credential: "password"}, "credential"},
		"lifecycle":           {contract.InterfaceDeclaration{Name: "x", Kind: "http", Lifecycles: []string{"forever"}}, "lifecycle"},
		"level":               {contract.InterfaceDeclaration{Name: "x", Kind: "http", HealthLevels: []string{"deep"}}, "health level"},
		"origins not browser": {contract.InterfaceDeclaration{Name: "x", Kind: "http", PublicOrigins: true}, "S5"},
		"browser terminal":    {contract.InterfaceDeclaration{Name: "x", Kind: "terminal", Browser: true}, "browser"},
		"reserved field":      {contract.InterfaceDeclaration{Name: "x", Kind: "http", Settings: map[string]any{"port": map[string]any{}}}, "settings.port"},
	} {
		err := contract.ValidateInterfaceDeclarations(append(good[:1:1], tc.decl))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "interfaces[1]") {
			t.Errorf("%s: %v, want an error about %s at interfaces[1]", name, err, tc.want)
		}
	}
}
