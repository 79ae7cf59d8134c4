// Command descgen writes the interfaces contract's settings fragment into
// every descriptor that declares interfaces (S8): each
// <dir>/*/packages/*/*.fabric-adapter.json given on the command line. Run it through
// `go generate ./adapterkit/harnessui`.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: descgen DIR...")
		os.Exit(2)
	}
	failed := false
	for _, dir := range os.Args[1:] {
		files, err := filepath.Glob(filepath.Join(dir, "*", "packages", "*", "*.fabric-adapter.json"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for _, f := range files {
			if err := update(f); err != nil {
				fmt.Fprintf(os.Stderr, "descgen: %s: %v\n", f, err)
				failed = true
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

func update(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := harnessui.UpdateDescriptor(data)
	if err != nil {
		return err
	}
	if bytes.Equal(out, data) {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, out, st.Mode().Perm()); err != nil {
		return err
	}
	fmt.Println("descgen: updated", path)
	return nil
}
