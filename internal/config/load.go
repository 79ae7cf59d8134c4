package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// Options control how a config is loaded.
type Options struct {
	// BaseDir resolves relative paths. "" means the directory of the config
	// file, or the working directory for Parse.
	BaseDir string
	// Strict makes unknown top-level keys errors instead of warnings.
	// Unknown keys in nested objects stay warnings.
	Strict bool
	// LookupEnv reads the variables of ${VAR} interpolation. nil means
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Loaded is a config that passed every check.
type Loaded struct {
	Config   contract.FabricConfig // defaults applied, relative paths resolved
	Path     string                // absolute file path ("" for Parse without name)
	BaseDir  string                // absolute
	Warnings []contract.Diagnostic // e.g. code unknown_key, severity warning
}

// LoadFile reads and checks the config file at path. Files ending in
// .json are JSON and files ending in .yaml or .yml are YAML; any other
// file is JSON when its first non-space byte is '{', else YAML.
//
// Every error found is returned, joined with errors.Join; each is a
// *contract.ConfigError. Messages name the file as path was given.
func LoadFile(path string, opts Options) (*Loaded, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	base := opts.BaseDir
	if base == "" {
		base = filepath.Dir(abs)
	}
	return load(data, path, abs, base, opts)
}

// Parse checks a config held in memory. name is used to detect the format
// (as LoadFile) and in messages; it may be "". Relative paths resolve
// against opts.BaseDir, or the working directory.
func Parse(data []byte, name string, opts Options) (*Loaded, error) {
	if len(data) > MaxConfigSize {
		return nil, tooLarge(name)
	}
	var abs string
	if name != "" {
		var err error
		if abs, err = filepath.Abs(name); err != nil {
			return nil, unreadable(name, err)
		}
	}
	base := opts.BaseDir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, unreadable(name, fmt.Errorf("working directory: %w", err))
		}
		base = wd
	}
	return load(data, name, abs, base, opts)
}

// readFile reads at most MaxConfigSize bytes, refusing larger files before
// reading them when their size is known.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, unreadable(path, err)
	case info.IsDir():
		return nil, unreadable(path, errors.New("is a directory"))
	case info.Mode().IsRegular() && info.Size() > MaxConfigSize:
		return nil, tooLarge(path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	switch {
	case err != nil:
		return nil, unreadable(path, err)
	case len(data) > MaxConfigSize:
		return nil, tooLarge(path)
	}
	return data, nil
}

func unreadable(name string, err error) error {
	rep := report{file: name}
	e := rep.failf(CodeUnreadable, "", 0, "cannot read the config: %v", err)
	e.Err = err
	return e
}

func tooLarge(name string) error {
	rep := report{file: name}
	return rep.failf(CodeTooLarge, "", 0, "the config is larger than %d bytes", MaxConfigSize)
}

// load runs the checks on data read from name.
func load(data []byte, name, abs, base string, opts Options) (*Loaded, error) {
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, unreadable(name, fmt.Errorf("base directory: %w", err))
	}
	rep := &report{file: name}
	root := parse(data, name, rep)
	if root == nil {
		return nil, rep.err()
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	w := walker{rep: rep, lookup: lookup}
	extra := w.walkRoot(root, opts.Strict)
	if rep.failed() {
		return nil, rep.err()
	}
	cfg, err := decode(root, extra, rep)
	if err != nil {
		return nil, err
	}
	resolvePaths(&cfg, base)
	return &Loaded{Config: cfg, Path: abs, BaseDir: base, Warnings: rep.warnings}, nil
}

// parse reads data as YAML or JSON; the top level must be a mapping.
func parse(data []byte, name string, rep *report) *value {
	var root *value
	if isJSON(data, name) {
		root = parseJSON(data, rep)
	} else {
		root = parseYAML(data, rep)
	}
	if root != nil && root.kind != kindObject {
		rep.failf(CodeInvalidType, "", root.line, "the config must be a mapping at the top level, got %s", root.kind)
		return nil
	}
	return root
}

// isJSON picks the format from the extension, else from the first byte.
func isJSON(data []byte, name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return true
	case ".yaml", ".yml":
		return false
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte(utf8BOM)), " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// walkRoot checks the top level. Unknown top-level keys are taken out of
// root and returned, to be kept in FabricConfig.Extra.
func (w *walker) walkRoot(root *value, strict bool) map[string]json.RawMessage {
	known := map[string]bool{}
	for _, f := range fieldsOf(configType()) {
		known[f.name] = true
	}
	var extra map[string]json.RawMessage
	kept := root.members[:0]
	for _, m := range root.members {
		if known[m.key] {
			kept = append(kept, m)
			continue
		}
		if strict {
			w.rep.failf(CodeUnknownKey, childPath("", m.key), m.keyLine, "unknown top-level key %q", m.key)
		} else {
			w.rep.warnf(CodeUnknownKey, childPath("", m.key), m.keyLine, "unknown top-level key %q is kept but not used", m.key)
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[m.key] = m.value.appendJSON(nil)
	}
	root.members = kept
	w.walkStruct(configType(), root, "")
	return extra
}

// decode turns a walked value into the contract type. The walk leaves only
// known keys (encoding/json would match other keys case-insensitively), so
// a decoding error here is a bug in the walk; it is still reported at its
// path.
func decode(root *value, extra map[string]json.RawMessage, rep *report) (contract.FabricConfig, error) {
	var cfg contract.FabricConfig
	if err := json.Unmarshal(root.appendJSON(nil), &cfg); err != nil {
		path := ""
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			path = te.Field
		}
		e := rep.failf(CodeInvalidType, path, 0, "cannot decode the config: %v", err)
		e.Err = err
		return cfg, rep.err()
	}
	cfg.Extra = extra
	return cfg, nil
}
