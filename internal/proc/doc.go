// Package proc spawns MCP stdio servers and reaps them, leaving no orphans.
//
// A server is arbitrary code that may start children of its own (npx starts
// node, sh -c starts its command, a server may daemonize a helper). The host
// must stop all of them when it closes the server, when the server dies, and
// when the host itself dies — including by SIGKILL, when no code of ours
// runs. Start returns a Process whose Stdin and Stdout are the protocol
// stream (hand them to mcp.IOTransport) and whose stderr is kept, from the
// moment of spawn, in a ring of the last Spec.StderrLimit bytes (StderrTail),
// so a flood never blocks the child nor grows memory.
//
// # Stopping
//
// Close follows the MCP spec's order: close stdin, wait, SIGTERM the
// server's process group, wait, SIGKILL the group. Every server runs in a
// process group of its own, so signals reach its children too, and a
// terminal's Ctrl-C reaches only the host. When the server exits by itself,
// what it left in its group is killed as well. The std streams are *os.File
// pipes owned by this package, so exec.Cmd.Wait has no copying goroutine to
// wait for and cannot hang on a grandchild that holds a pipe; the pipes are
// closed by Close, or shortly after the exit, whichever comes first.
//
// # Surviving the host's death
//
// Plain mode (Spec.Supervise false, or no supervisor available): on Linux
// the server gets Pdeathsig=SIGKILL. The kernel sends it when the thread
// that forked the child exits, so every spawn runs on one locked OS thread
// that lives as long as the host. It reaches only the server: its children
// are orphaned to init and survive unless they exit on their own (for
// instance on stdin EOF). macOS has no parent-death signal at all.
//
// Supervised mode closes that gap. The host re-executes itself as a small
// supervisor (SupervisorCommand; the program's main must call
// MaybeRunSupervisor first), which sits between host and server:
//
//	host ──(pipes)── supervisor ── server (own process group) ── children…
//
// The supervisor passes its stdin, stdout and stderr to the server
// unchanged (no copying, no added latency), reports the server's pid to the
// host on a control pipe, and then drops its own stdin and stdout, so the
// server's death is EOF to the host at once. It adds about 3 ms to a spawn. On Linux it gets Pdeathsig=SIGTERM, which it
// catches, and it makes itself a child subreaper (PR_SET_CHILD_SUBREAPER),
// so every descendant orphaned below it, even one that left the group with
// setsid, is reparented to it instead of to init. It also polls getppid,
// the only sign of the host's death on macOS. When the server exits, or the
// host dies, it sends SIGTERM to the server's group, then SIGKILL, kills
// every remaining descendant it can find in /proc, reaps them, and exits
// with the server's status (or dies by the same signal), so the host's
// ExitErr reads as without it. Close and Kill also signal the server's group
// directly, so a wedged supervisor cannot keep the server alive.
//
// What remains uncovered: in plain mode, descendants of the server after the
// host's SIGKILL, and descendants that leave the server's group; on macOS,
// a descendant that leaves the group and is orphaned (no subreaper there);
// and, anywhere, work handed to a process outside the tree (a system daemon).
//
// On Windows each server is created suspended, put in a Job Object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, then resumed: the job kills the whole
// tree when its handle is closed, which Windows does when the host dies.
// Close sends CTRL_BREAK before terminating the job; no supervisor is used.
// ResolveCommand runs batch files such as npx.cmd through cmd /c there.
package proc
