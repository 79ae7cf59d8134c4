package archcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// EnvBase names a git ref to take the merge base with, instead of
// origin/main or main.
const EnvBase = "FABRIC_RATCHET_BASE"

// ErrNoBase means there is nothing to compare the budget file with: git is
// missing, root is not a git checkout, or no base ref exists. The error
// says which; the count checks still apply.
var ErrNoBase = errors.New("no merge base to compare the budget with")

// MergeBase returns the commit the budget file is compared with and the ref
// it came from: the merge base of HEAD and ref when ref is set (EnvBase),
// else with origin/main when it exists, else with main. On main itself (a
// clean CI checkout of main has no remote) the base is HEAD, so only an
// uncommitted raise fails there: the rule bites on a branch, before it is
// merged. An error wrapping ErrNoBase means there is nothing to compare
// with (also when origin/main or main shares no commit with HEAD, as in a
// shallow clone); any other error (a named ref with no merge base) is a
// failure.
func MergeBase(ctx context.Context, root, ref string) (commit, from string, err error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrNoBase, err)
	}
	if _, err := git(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return "", "", fmt.Errorf("%w: %s is not a git checkout with a commit: %v", ErrNoBase, root, err)
	}
	explicit := ref != ""
	if !explicit {
		for _, r := range []string{"origin/main", "main"} {
			if _, err := git(ctx, root, "rev-parse", "--verify", "--quiet", r+"^{commit}"); err == nil {
				ref = r
				break
			}
		}
		if ref == "" {
			return "", "", fmt.Errorf("%w: neither origin/main nor main exists (set %s to a ref)", ErrNoBase, EnvBase)
		}
	}
	out, err := git(ctx, root, "merge-base", "HEAD", ref)
	switch {
	case err != nil && explicit:
		return "", "", fmt.Errorf("merge base of HEAD and %s: %w", ref, err)
	case err != nil: // a shallow clone may hold no common ancestor
		return "", "", fmt.Errorf("%w: merge base of HEAD and %s (set %s to a ref to make this a failure): %v", ErrNoBase, ref, EnvBase, err)
	}
	return out, ref, nil
}

// BudgetAt returns the budget file as committed at commit; found is false
// when the file is not there (the commit predates the ratchet).
func BudgetAt(ctx context.Context, root, commit string) (budget map[string]int, found bool, err error) {
	spec := commit + ":" + BudgetFile
	if _, err := git(ctx, root, "cat-file", "-e", spec); err != nil {
		return nil, false, nil
	}
	out, err := git(ctx, root, "show", spec)
	if err != nil {
		return nil, false, err
	}
	b, err := ReadBudget([]byte(out))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", spec, err)
	}
	return b, true, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
