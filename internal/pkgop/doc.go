// Package pkgop runs a runtime package's helper operations (a package
// descriptor's `operations`) and holds them to what they declare: a read
// operation changes nothing, a configure operation changes only the state
// paths it lists in `writes`.
//
// It always detects: a tree manifest of every watched root (the state
// paths, the package directory, the workspace, the artifact root) is taken
// before and after, and any change outside the declared writes fails the
// operation closed (operation_mutated_state), discards its output and
// marks the result tainted. On Linux it also enforces: the command runs in
// a re-exec'd child of the current binary that applies Landlock with write
// rights only beneath the declared writes and a private temp dir, then
// execs the command. A read operation that cannot be enforced is refused
// (operation_unenforced) unless the caller allows it.
//
// It never runs a shell of its own, never follows the operation's symlinks
// out of the watched roots, and never keeps the output of an operation that
// changed what it must not.
package pkgop
