package pkgop

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// capSysAdmin is CAP_SYS_ADMIN's bit in /proc/self/status CapEff.
const capSysAdmin = 21

func overlayAvailable() bool {
	if os.Geteuid() != 0 {
		return false
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<capSysAdmin) != 0
		}
	}
	return false
}

// isWhiteout reports whether p is an overlayfs whiteout: a character
// device with device number 0/0.
func isWhiteout(p string) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0
}

// unshareMounts starts cmd in a new mount namespace whose mounts are
// private (the Go runtime makes / MS_REC|MS_PRIVATE in the child), so the
// overlays it mounts are seen by it alone and vanish with it.
func unshareMounts(cmd *exec.Cmd) {
	cmd.SysProcAttr.Unshareflags |= syscall.CLONE_NEWNS
}

// mountOverlays mounts each overlay onto its lower directory, then makes
// dir (the operation's working directory, possibly beneath one of them)
// the working directory again, so that it is the overlay's and not the
// directory underneath.
func mountOverlays(mounts []overlayMount, dir string) error {
	for _, m := range mounts {
		opts := "lowerdir=" + m.Lower + ",upperdir=" + m.Upper + ",workdir=" + m.Work
		if err := unix.Mount("overlay", m.Lower, "overlay", 0, opts); err != nil {
			return fmt.Errorf("mount an overlay on %s: %w", m.Lower, err)
		}
	}
	if dir != "" {
		if err := unix.Chdir(dir); err != nil {
			return fmt.Errorf("chdir %s: %w", dir, err)
		}
	}
	return nil
}

// copyRootAttrs gives dir the permission bits, owner and times of root.
func copyRootAttrs(root, dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(root, &st); err != nil {
		return fmt.Errorf("stat %s: %w", root, err)
	}
	if err := unix.Chown(dir, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("chown %s: %w", dir, err)
	}
	if err := unix.Chmod(dir, st.Mode&0o7777); err != nil {
		return fmt.Errorf("chmod %s: %w", dir, err)
	}
	ts := []unix.Timespec{st.Atim, st.Mtim}
	if err := unix.UtimesNano(dir, ts); err != nil {
		return fmt.Errorf("set the times of %s: %w", dir, err)
	}
	return nil
}

// rootChanged reports whether the operation changed the overlay root's
// own attributes: its permission bits or owner, or its modification time
// when nothing beneath it changed (creating or removing an entry moves
// it, and that entry is reported itself).
func rootChanged(root, upper string, entries bool) (bool, error) {
	var was, now unix.Stat_t
	if err := unix.Lstat(root, &was); err != nil {
		return false, err
	}
	if err := unix.Lstat(upper, &now); err != nil {
		return false, err
	}
	if was.Mode != now.Mode || was.Uid != now.Uid || was.Gid != now.Gid {
		return true, nil
	}
	return !entries && was.Mtim != now.Mtim, nil
}
