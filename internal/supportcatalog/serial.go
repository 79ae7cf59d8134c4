package supportcatalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SerialFile is where the last catalog serial this machine accepted is
// kept: $XDG_STATE_HOME/fabric/catalog.serial, else
// ~/.local/state/fabric/catalog.serial. getenv is os.Getenv in
// production.
func SerialFile(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "fabric", "catalog.serial"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("supportcatalog: neither XDG_STATE_HOME nor HOME is set; cannot keep the catalog serial")
	}
	return filepath.Join(home, ".local", "state", "fabric", "catalog.serial"), nil
}

// ReadSerial returns the serial recorded in path, 0 when there is none.
func ReadSerial(path string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("supportcatalog: serial file: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("supportcatalog: serial file %s: not a serial", path)
	}
	return n, nil
}

// RecordSerial records serial in path unless a higher one is there. It
// writes a temporary file and renames it, so a reader never sees half.
func RecordSerial(path string, serial int) error {
	last, err := ReadSerial(path)
	if err != nil {
		return err
	}
	if serial <= last {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("supportcatalog: serial file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".catalog.serial.*")
	if err != nil {
		return fmt.Errorf("supportcatalog: serial file: %w", err)
	}
	_, werr := fmt.Fprintf(tmp, "%d\n", serial)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("supportcatalog: serial file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("supportcatalog: serial file: %w", err)
	}
	return nil
}
