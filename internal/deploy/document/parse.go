package document

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/strictdoc"
)

// Document is a deployment document that passed every check.
type Document struct {
	Deployment contract.Deployment // as authored: no defaults applied
	Path       string              // the file (absolute for Load), or Parse's name
	BaseDir    string              // absolute; relative paths in the document resolve against it
	Digest     string              // sha256 hex of the canonical JSON of Deployment
}

// Load reads the document at path (at most MaxDocumentSize bytes) and
// parses it with its directory as the base directory. Messages name the
// file as path was given.
func Load(path string) (*Document, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	data, err := strictdoc.ReadFile(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	doc, err := Parse(data, path, filepath.Dir(abs))
	if err != nil {
		return nil, err
	}
	doc.Path = abs
	return doc, nil
}

func unreadable(path string, err error) error {
	return Errors{{File: path, Code: CodeUnreadable, Message: "cannot read the deployment document: " + err.Error()}}
}

// Parse checks a document held in memory. name names it in messages (and
// picks JSON when it ends in .json; input starting with '{' is JSON too);
// baseDir resolves relative paths, "" meaning the working directory.
//
// The error, when not nil, is Errors: every problem found, sorted by line.
func Parse(data []byte, name, baseDir string) (*Document, error) {
	rep := &strictdoc.Report{File: name}
	base, err := filepath.Abs(baseDir)
	if err != nil {
		return nil, unreadable(name, fmt.Errorf("base directory: %w", err))
	}
	root := strictdoc.Root(data, rep, contract.DeploymentSchemaVersion)
	if root == nil {
		return nil, rep.Err()
	}
	doc := &Document{Path: name, BaseDir: base}
	dec := newDecoder(rep)
	dec.Decode(root, "", root.Line, reflect.ValueOf(&doc.Deployment).Elem())
	c := checker{rep: rep, lines: dec.Lines, dep: &doc.Deployment}
	c.check()
	if err := rep.Err(); err != nil {
		return nil, err
	}
	if doc.Digest, err = Digest(&doc.Deployment); err != nil {
		return nil, err
	}
	return doc, nil
}

// Digest is the sha256 hex of the canonical JSON of d: its JSON with every
// object's keys sorted, no space, and numbers in one spelling (integers as
// integers, others as Go formats a float64), so that inline FabricConfig
// numbers written 1e3, 1000.0 or 1000 agree.
func Digest(d *contract.Deployment) (string, error) {
	b, err := canonicalJSON(d)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func canonicalJSON(d *contract.Deployment) ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("document: encode deployment: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New("document: deployment JSON does not read back: " + err.Error())
	}
	v = canonicalNumbers(v)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps encode with sorted keys
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

func canonicalNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = canonicalNumbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = canonicalNumbers(x)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return u
		}
		f, _ := strconv.ParseFloat(string(v), 64) // JSON numbers parse; out of range was rejected
		return f
	}
	return v
}
