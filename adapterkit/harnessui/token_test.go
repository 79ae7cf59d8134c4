package harnessui

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// TestPresetToken: a Child.Token is the credential written to the token
// file (for interfaces sharing one server's password); a short one, or one
// without a credential scheme, is refused before anything starts.
func TestPresetToken(t *testing.T) {
	preset := strings.Repeat("ab", 32)
	term := func(token, cred string) Child {
		return Child{Name: "terminal", Kind: contract.InterfaceTerminal, Credential: cred, Token: token,
			Launcher: &Launcher{Argv: []string{"/bin/true"}, TokenEnv: "PASSWORD"}}
	}
	spec := testSpec(t, nil, term(preset, contract.CredentialBasic))
	set := mustStart(t, spec)
	data, err := os.ReadFile(tokenFile(InterfacesDir(spec.ArtifactRoot, spec.AdapterName, spec.RuntimeID), "terminal"))
	if err != nil || string(data) != preset {
		t.Fatalf("token file %q, %v; want the preset token", data, err)
	}
	if set.Token("terminal") != preset {
		t.Error("Set.Token is not the preset token")
	}
	for name, c := range map[string]Child{
		"short":         term("abc", contract.CredentialBasic),
		"no credential": func() Child { c := term(preset, contract.CredentialNone); c.Launcher.TokenEnv = ""; return c }(),
	} {
		t.Run(name, func(t *testing.T) {
			spec := testSpec(t, nil, c)
			_, err := Start(context.Background(), spec)
			assertFailedStart(t, err, CodeInvalid, "terminal", spec, nil)
		})
	}
}
