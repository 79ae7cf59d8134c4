package hostproto

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// CheckRunResult enforces the rules of the agent-run-result schema that
// decoding into contract.AgentRunResult does not: the status enum, an error
// required with failed and absent with succeeded, and no blank error code,
// error message, artifact name, kind, path or media type. The host checks
// what it sends, the core what it receives.
//
// Artifact paths are checked apart (CheckArtifactPaths, ArtifactPathOK):
// an escaping path is refused by the host but, from a host that sent it
// anyway, only dropped by the core.
func CheckRunResult(r *contract.AgentRunResult) error {
	switch r.Status {
	case contract.StatusSucceeded:
		if r.Error != nil {
			return errors.New("a succeeded result must not carry an error")
		}
	case contract.StatusFailed:
		if r.Error == nil {
			return errors.New("a failed result needs an error")
		}
	case contract.StatusCancelled:
	default:
		return fmt.Errorf("status %q is not succeeded, failed or cancelled", r.Status)
	}
	if e := r.Error; e != nil && (blank(e.Code) || blank(e.Message)) {
		return errors.New("error code and message must not be blank")
	}
	for i, a := range r.Artifacts {
		if blank(a.Name) || blank(a.Kind) || blank(a.Path) {
			return fmt.Errorf("artifact %d: name, kind and path must not be blank", i)
		}
		if a.MediaType != nil && blank(*a.MediaType) {
			return fmt.Errorf("artifact %d: media type must not be blank", i)
		}
	}
	return nil
}

// CheckArtifactPaths reports the first artifact whose path is not
// ArtifactPathOK.
func CheckArtifactPaths(r *contract.AgentRunResult) error {
	for i, a := range r.Artifacts {
		if !ArtifactPathOK(a.Path) {
			return fmt.Errorf("artifact %d: path must be relative to the artifact root", i)
		}
	}
	return nil
}

// ArtifactPathOK reports whether p names a place inside the artifact root,
// read lexically: not empty, no leading slash or backslash, no drive
// letter, no ".." segment (with either separator). Symbolic links are the
// reader's to resolve.
func ArtifactPathOK(p string) bool {
	if p == "" || p[0] == '/' || p[0] == '\\' || (len(p) >= 2 && p[1] == ':') {
		return false
	}
	for seg := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return false
		}
	}
	return true
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }
