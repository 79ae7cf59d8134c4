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
// The reading and parsing of procfs is internal/procfs's; this package
// decides what the readings mean.
//
// The package must never signal a process it did not start, nor a process
// group whose leader's pid has been reused (its start time changed), and
// [Process.Stop] must never return nil while a live process is left in the
// group. It reads procfs but never writes it. Apart from the spawner
// described below, which runs only while some child is unreaped, it starts no
// goroutine that outlives the process it watches.
//
// Pdeathsig is delivered when the thread that forked the child exits, not when
// the supervising process exits. Start therefore forks every child from one
// spawner goroutine locked to its OS thread; the spawner neither unlocks nor
// returns while a child it forked is unreaped, so that thread exits only with
// the supervisor. It is started on demand and ends once nothing it forked is
// left to reap. Pdeathsig covers the direct child only: grandchildren in the
// group outlive a crashed supervisor unless the child arranges otherwise.
//
// Supervising a child costs a goroutine but no OS thread: its exit is awaited
// on a pidfd in the runtime's netpoller, and its stdio is copied through
// pipes that also wait in the netpoller. Only when no pidfd can be opened (a
// kernel before 5.3, or no descriptor left) does the wait fall back to a
// blocking waitid, which holds a thread while the child runs.
//
// Process supervision is implemented on Linux only; on other systems Start
// returns an error wrapping [errors.ErrUnsupported]. The procfs parsers
// compile everywhere.
package proc
