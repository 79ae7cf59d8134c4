// Package procfs reads the Linux process filesystem: the stat line of a
// process and of its threads, the list of pids, the members of a process
// group, a process's owner, environment and command line (and the
// processes whose environment holds an entry), the boot id, the listening TCP sockets of
// /proc/net/tcp and tcp6, and which processes hold a socket.
//
// It is the one place in Fabric that parses these files. Every reader takes
// its mount point from an [FS] value, so tests run against a fake tree in a
// temporary directory; [Default] is the real /proc.
//
// The package only reads. It must never write to procfs, signal, wait for or
// otherwise act on a process, nor keep state between calls: deciding what a
// reading means (whether a pid was reused, whom to kill) belongs to its
// callers. A process that exits while it is read is reported as gone
// (errors.Is(err, fs.ErrNotExist)) or skipped by the listing readers, never as
// a parse error.
//
// The parsers compile on every system (UID on Unix ones); on systems without
// procfs the readers return errors wrapping fs.ErrNotExist.
package procfs
