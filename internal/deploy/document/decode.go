package document

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/strictdoc"
)

var (
	integrationType   = reflect.TypeFor[contract.Integration]()
	credentialRefType = reflect.TypeFor[contract.CredentialRef]()
)

// newDecoder decodes contract.Deployment strictly (internal/strictdoc),
// with an integration read by its kind and a credential's own code.
func newDecoder(rep *strictdoc.Report) *strictdoc.Decoder {
	d := strictdoc.NewDecoder(rep)
	d.Rules = map[reflect.Type]strictdoc.TypeRule{credentialRefType: {
		Code:     CodeInvalidCredential,
		Mismatch: "a credential is an object {env: NAME} or {file: PATH}, not %s; never write the secret itself",
	}}
	d.Custom = func(d *strictdoc.Decoder, v *yaml.Node, path string, line int, dst reflect.Value) bool {
		if dst.Type() != integrationType {
			return false
		}
		integration(d, v, path, line, dst)
		return true
	}
	return d
}

// integration reads "kind" and then the fields of that kind.
func integration(d *strictdoc.Decoder, v *yaml.Node, path string, line int, dst reflect.Value) {
	if !d.Expect(v, strictdoc.KindObject, CodeInvalidType, path, line) {
		return
	}
	var kindValue *yaml.Node
	kindLine := line
	for i := 0; i+1 < len(v.Content); i += 2 {
		if v.Content[i].Value == "kind" {
			kindValue, kindLine = v.Content[i+1], v.Content[i].Line
		}
	}
	kp := strictdoc.ChildPath(path, "kind")
	d.Lines[kp] = kindLine
	switch {
	case kindValue == nil:
		d.Rep.Add(CodeMissingField, kp, line, "kind is required (one of "+strings.Join(contract.IntegrationKinds(), ", ")+")")
		return
	case strictdoc.KindOf(kindValue) != strictdoc.KindString:
		d.Rep.Add(CodeInvalidType, kp, kindLine, "expected a string, found "+string(strictdoc.KindOf(kindValue)))
		return
	}
	in, ok := contract.NewIntegration(kindValue.Value)
	if !ok {
		d.Rep.Add(CodeUnknownKind, kp, kindLine, fmt.Sprintf("unknown integration kind %q (known: %s)", kindValue.Value, strings.Join(contract.IntegrationKinds(), ", ")))
		return
	}
	d.Object(v, path, line, reflect.ValueOf(in.Variant()).Elem(), CodeInvalidType, []string{"kind"})
	dst.Set(reflect.ValueOf(in))
}
