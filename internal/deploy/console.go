package deploy

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// CodeConsoleUnavailable: the supervisor runs without a console (fabric
// serve --console-listen off), or its token file cannot be read.
const CodeConsoleUnavailable = "console_unavailable"

// ConsoleResult is what fabric deploy console prints.
type ConsoleResult struct {
	// URL is the console's address, without a credential.
	URL string `json:"url"`
	// TokenFile holds the sign-in token (scripts send it as
	// Authorization: Bearer).
	TokenFile string `json:"token_file"`
	// SignInURL is URL with the token in its fragment, which a browser
	// never sends to a server: open it to sign in. Empty with NoToken.
	SignInURL string `json:"sign_in_url,omitempty"`
}

// Console finds the running supervisor's console. With noToken it leaves
// the token out (the token file's path is enough for a script).
func Console(ctx context.Context, o Options, noToken bool) (*ConsoleResult, error) {
	l, _, _, err := open(&o, false, false)
	if err != nil {
		return nil, err
	}
	socket := socketOf(l)
	st, err := supervisorStatus(ctx, socket)
	if err != nil {
		return nil, &Error{Code: CodeSupervisorUnreachable, Message: fmt.Sprintf("no supervisor answers on %s: run fabric deploy apply", socket)}
	}
	sv := st.Supervisor
	if sv.Console == "" || sv.ConsoleTokenFile == "" {
		return nil, &Error{Code: CodeConsoleUnavailable, Message: "the supervisor runs without a console (fabric serve --console-listen off)"}
	}
	res := &ConsoleResult{URL: sv.Console, TokenFile: sv.ConsoleTokenFile}
	if noToken {
		return res, nil
	}
	tok, err := readOwnerOnly(sv.ConsoleTokenFile)
	if err != nil {
		return nil, &Error{Code: CodeConsoleUnavailable, Message: err.Error()}
	}
	res.SignInURL = sv.Console + "/#token=" + tok
	return res, nil
}

// readOwnerOnly reads a one-line secret from a regular file that only its
// owner (this user) can read.
func readOwnerOnly(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", fmt.Errorf("the console token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the console token file %s is not an owner-only regular file (mode %v): refusing it", path, fi.Mode())
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return "", fmt.Errorf("the console token file %s belongs to another user: refusing it", path)
	}
	b := make([]byte, 256)
	n, _ := f.Read(b)
	tok := strings.TrimSpace(string(b[:n]))
	if tok == "" {
		return "", fmt.Errorf("the console token file %s is empty", path)
	}
	return tok, nil
}
