package document

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fabric-runtime/fabric/contract"
)

// MarshalYAML writes d as a deployment document: every definition at the
// scope it was authored in, agents attaching by reference, keys in the
// order of the Go types (map keys sorted), two-space indentation. Parsing
// the output gives a document with the same Digest.
func MarshalYAML(d *contract.Deployment) ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("document: encode deployment: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	root, err := yamlNode(dec)
	if err != nil {
		return nil, fmt.Errorf("document: convert deployment: %w", err)
	}
	var out bytes.Buffer
	enc, err := yaml.NewDumper(&out, yaml.WithIndent(2), yaml.WithLineWidth(-1))
	if err != nil {
		return nil, err
	}
	if err := enc.Dump(root); err != nil {
		return nil, fmt.Errorf("document: write YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// yamlNode reads one JSON value from dec as a YAML node, keeping the order
// of object keys.
func yamlNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if t == '{' {
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
		}
		for dec.More() {
			if n.Kind == yaml.MappingNode {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key.(string)})
			}
			child, err := yamlNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, child)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, errors.New("unexpected JSON token")
}

// Init returns a new document named name: a fresh uid, a process
// supervisor, and sandbox "main" with one agent, "agent", configured inline
// for the scripted adapter. It parses cleanly.
func Init(name string) ([]byte, error) {
	if is := contract.ValidateName(name); len(is) > 0 {
		return nil, fmt.Errorf("document: name %q: %s", name, is[0].Message)
	}
	uid, err := newUID(rand.Reader)
	if err != nil {
		return nil, err
	}
	meta, err := json.Marshal(map[string]string{"name": name + "-agent"})
	if err != nil {
		return nil, err
	}
	fabric := json.RawMessage(`{"schema_version":"` + contract.ConfigSchemaVersion + `","metadata":` + string(meta) +
		`,"runtime":{},"harness":{"adapter_id":"fabric.scripted"}}`)
	d := contract.Deployment{
		SchemaVersion: contract.DeploymentSchemaVersion,
		Metadata:      contract.DeploymentMetadata{Name: name, UID: uid},
		Spec: contract.DeploymentSpec{
			Supervisor: contract.SupervisorSpec{Kind: contract.SupervisorProcess},
			Sandboxes: []contract.SandboxSpec{{
				Name:   "main",
				Agents: []contract.DeployedAgent{{Name: "agent", Fabric: fabric}},
			}},
		},
	}
	body, err := MarshalYAML(&d)
	if err != nil {
		return nil, err
	}
	head := "# A Fabric deployment (" + contract.DeploymentSchemaVersion + "); reference: docs/deployment-document.md.\n" +
		"# metadata.uid identifies this deployment: keep it when you edit the file.\n"
	return append([]byte(head), body...), nil
}

// newUID returns a random (version 4) UUID read from r.
func newUID(r io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("document: random uid: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
