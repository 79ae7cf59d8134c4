// Package proc supervises child processes for the Fabric core (adapter host
// processes) and for adapters (harness processes), and answers port-ownership
// questions from Linux procfs.
//
// Every child is started by [Start] as the leader of its own process group,
// with Pdeathsig set to SIGKILL on Linux, and is pinned to the start time that
// /proc/<pid>/stat reports for it. Signals go to the whole group. [Process.Stop]
// sends SIGTERM, waits for the grace period, sends SIGKILL, and then waits
// until the leader is reaped and no live process is left in the group, so
// grandchildren a harness left behind are stopped too. [ListeningTCP],
// [SocketOwners], [PortInUse] and [Process.OwnsListener] read /proc/net/tcp,
// /proc/net/tcp6 and /proc/<pid>/fd to tell which process holds a listening
// port; they take the procfs root as a parameter so tests can use a fake tree.
//
// The package must never signal a process it did not start, nor a process
// group whose leader's pid has been reused (its start time changed), and
// [Process.Stop] must never return nil while a live process is left in the
// group. It reads procfs but never writes it, and it starts no goroutine that
// outlives the process it watches.
//
// Pdeathsig is delivered when the thread that forked the child exits, not when
// the supervising process exits. Start therefore forks from a goroutine locked
// to its OS thread, and keeps that goroutine (which also waits for the child)
// on the thread until the child has been reaped; the thread exits only with
// the supervisor. Pdeathsig covers the direct child only: grandchildren in the
// group outlive a crashed supervisor unless the child arranges otherwise.
//
// Process supervision is implemented on Linux only; on other systems Start
// returns an error wrapping [errors.ErrUnsupported]. The procfs parsers
// compile everywhere.
package proc
