// Command schemagen writes the JSON Schemas generated from package contract (by package schema),
// one <name>.schema.json per schema.Names entry, and removes stale
// *.schema.json files from the output directory. It runs from
// `go generate ./contract/schema`.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fabric-runtime/fabric/contract/schema"
)

func main() {
	out := flag.String("out", "../schemas", "directory to write <name>.schema.json files to")
	check := flag.Bool("check", false, "report files that differ instead of writing them; exit 1 on drift")
	flag.Parse()
	if err := run(*out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	if !check {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var drift []string
	names := schema.Names()
	for _, name := range names {
		want, err := schema.Generate(name)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, name+".schema.json")
		got, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if bytes.Equal(got, want) {
			continue
		}
		if check {
			drift = append(drift, path)
			continue
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			return err
		}
	}
	stale, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if err != nil {
		return err
	}
	for _, path := range stale {
		if slices.Contains(names, strings.TrimSuffix(filepath.Base(path), ".schema.json")) {
			continue
		}
		if check {
			drift = append(drift, path+" (stale)")
			continue
		}
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	if len(drift) > 0 {
		return fmt.Errorf("out of date, run `go generate ./contract/schema`: %s", strings.Join(drift, ", "))
	}
	return nil
}
