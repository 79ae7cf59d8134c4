// Command fabric-matrix writes docs/harnesses.md, the capability matrix
// generated from the adapter descriptors (see internal/matrix). With
// -check it writes nothing and exits 1 when the file is out of date.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/internal/matrix"
)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "exit 1 when the file is out of date instead of writing it")
	flag.Parse()
	var ds []matrix.Descriptor
	for _, d := range bundled.Descriptors() {
		ds = append(ds, matrix.Descriptor{Name: d.Name, Data: d.Data})
	}
	out, err := matrix.Generate(*root, ds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fabric-matrix:", err)
		os.Exit(1)
	}
	path := filepath.Join(*root, filepath.FromSlash(matrix.OutputPath))
	if *check {
		have, _ := os.ReadFile(path)
		if !bytes.Equal(have, out) {
			fmt.Fprintf(os.Stderr, "fabric-matrix: %s is out of date: run go generate ./internal/matrix\n", matrix.OutputPath)
			os.Exit(1)
		}
		return
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fabric-matrix:", err)
		os.Exit(1)
	}
}
