package pkgop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// The write-class rights, by the ABI that introduced them. Reading and
// executing are never handled, so they stay allowed everywhere.
const (
	writeABI1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	writeABI2 = writeABI1 | unix.LANDLOCK_ACCESS_FS_REFER
	writeABI3 = writeABI2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// fileRights are the write rights a rule on a file (not a directory)
	// may carry.
	fileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE
)

// rulesetAttr is struct landlock_ruleset_attr up to handled_access_fs, the
// part every ABI reads.
type rulesetAttr struct{ handledAccessFS uint64 }

// pathBeneathAttr is the packed struct landlock_path_beneath_attr (12
// bytes; the kernel reads no padding).
type pathBeneathAttr struct {
	allowedAccess uint64
	parentFD      int32
}

// devices may be opened for writing by any operation: writing to them
// changes no file.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// restrict applies Landlock to this thread with write rights only beneath
// spec.Writable and sets no_new_privs. The caller execs from this thread.
func restrict(spec sandboxSpec) error {
	abi := landlockABI()
	if abi < 1 {
		return errors.New("Landlock is not available")
	}
	handled := uint64(writeABI1)
	switch {
	case abi >= 3:
		handled = writeABI3
	case abi == 2:
		handled = writeABI2
	}
	attr := rulesetAttr{handledAccessFS: handled}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	for _, p := range spec.Writable {
		if err := allow(ruleset, nearestExisting(p), handled); err != nil {
			return err
		}
	}
	for _, p := range devices {
		if err := allow(ruleset, p, handled); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	unix.Close(ruleset)
	return nil
}

// allow adds a rule granting the handled write rights beneath p (only the
// file rights when p is not a directory).
func allow(ruleset int, p string, handled uint64) error {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: p, Err: err}
	}
	rights := handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	rule := pathBeneathAttr{allowedAccess: rights, parentFD: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", p, errno)
	}
	return nil
}

// nearestExisting is p, or its nearest ancestor that exists.
func nearestExisting(p string) string {
	for {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}
