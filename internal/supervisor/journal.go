package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rogpeppe/go-internal/renameio"

	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// readDesired reads the journaled desired state; nil when there is none.
// A journal of another format version is refused, never rewritten.
func readDesired(path string) (*desired.State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &agentctl.Error{Code: agentctl.CodeSocketUnavailable, Message: fmt.Sprintf("cannot read %s: %v", path, err)}
	}
	var head struct {
		FormatVersion string `json:"format_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, &agentctl.Error{Code: supervisorproto.CodeUnsupportedFormat, Message: fmt.Sprintf("%s is not a desired-state journal: %v", path, err)}
	}
	if head.FormatVersion != desired.FormatVersion {
		return nil, &agentctl.Error{Code: supervisorproto.CodeUnsupportedFormat, Message: fmt.Sprintf("%s has format %q; this supervisor reads %s and does not rewrite another version", path, head.FormatVersion, desired.FormatVersion)}
	}
	var st desired.State
	if err := decodeStrict(b, &st); err != nil {
		return nil, &agentctl.Error{Code: supervisorproto.CodeUnsupportedFormat, Message: fmt.Sprintf("%s: %v", path, err)}
	}
	return &st, nil
}

// writeDesired journals st atomically (temporary file, fsync, rename).
func writeDesired(path string, st *desired.State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return renameio.WriteFile(path, append(b, '\n'))
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
