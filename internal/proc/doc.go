// Package proc spawns MCP stdio servers and reaps them, leaving no orphans.
//
// A server is arbitrary code that may start children of its own (npx starts
// node, sh -c starts its command, a server may daemonize a helper). The host
// must stop all of them when it closes the server, when the server dies, and
// when the host itself dies — including by SIGKILL, when no code of ours
// runs. Start returns a Process whose Stdin and Stdout are the protocol
// stream (hand them to a stdio transport: the host's internal/jsonl, or
// mcp.IOTransport) and whose stderr is kept, from the
// moment of spawn, in a ring of the last Spec.StderrLimit bytes (StderrTail),
// so a flood never blocks the child nor grows memory.
//
// # Stopping
//
// Close follows the MCP spec's order: close stdin, wait, SIGTERM the
// server's process group, wait, SIGKILL the group. Every server runs in a
// process group of its own (under the supervisor, in the supervisor's
// session), so signals reach its children too, and a terminal's Ctrl-C
// reaches only the host. When the server exits by itself,
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
// Supervised mode closes that gap. The host re-executes itself once as a
// small supervisor (SupervisorCommand; the program's main must call
// MaybeRunSupervisor first), which starts every supervised server of that
// host and sits between host and servers:
//
//	host ──(socket)── supervisor ─┬─ server (own process group) ── children…
//	  └───────(pipes)─────────────┘  server …
//
// The host makes each server's pipes and hands the server's ends to the
// supervisor over a Unix socket (SCM_RIGHTS); the supervisor forks and
// execs the server with them and drops its copies, so the server alone
// holds them (no copying, no added latency) and its death is EOF to the
// host at once. One supervisor costs about 3 ms of CPU to start, once per
// host instead of once per server. It adds TagEnv to each server's
// environment, a tag unique to that server that its descendants inherit.
//
// On Linux the supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER),
// so every descendant orphaned below it, even one that left its server's
// group with setsid, is reparented to it instead of to init. When a server
// exits, the supervisor sends SIGTERM to what is left of its group and to
// the orphans whose tag is that server's (or a server's already gone),
// SIGKILL after a grace period, reaps them all, and only then reports the
// exit to the host, with the server's own wait status (ExitError).
//
// The supervisor leads a session of its own, so every process group below
// it was made by its servers' descendants, or is its own, and holds nothing
// else (a process may join a group of its own session only): the user's
// shell and jobs, and the host's, are out of reach, and servers have no
// controlling terminal. (A server is not a session leader itself: it would
// take as its terminal any tty it opens, and could not call setpgid.) A
// group is therefore signalled as a whole: the server's while it has
// members, and that of each orphan a sweep takes; the supervisor's own,
// which a descendant may join, only last, when the host dies. A process that forks a
// successor and exits, over and over, is never seen alive by a look at
// /proc, but a group signal reaches it, and the reaper reads the group of
// each orphan that exits from its zombie: when no server is left, or the
// host dies, the groups seen in the last second are signalled too (unless
// the id now names a group of another session, by its leader or a member
// seen). Such a
// loop outside its server's group cannot be attributed while other servers
// run. Nor can an orphan that cleared its tag, or whose environment cannot
// be read: it is killed once no server of the host is left, or when the
// host dies.
//
// A server inherits its three pipes and nothing else: the supervisor marks
// every descriptor it inherited close-on-exec when it starts, and receives
// the host's pipes close-on-exec. SIGHUP does not stop it. The supervisor
// is this very program, re-executed by its path while that is still the
// file it runs from, else through /proc/self/exe (after an upgrade). On
// macOS, which has no /proc, it is re-executed by its path
// (os.Executable), so a supervisor started after an upgrade replaced the
// file is the new version.
//
// Host and supervisor name a server by the ID of its spawn, never by its
// pid, which is free for reuse as soon as the server is reaped: the
// supervisor reports the reaping at once (the host then stops signalling
// the group) and the end of the sweep later (Done). A sweep stops
// signalling a group once it has seen it empty or its id names a process
// again (a new one: a group's id is not reused while it has members), and
// counts a fork under way as a live server (its child is the supervisor's
// before it is registered: untagged until it execs, then with its tag).
// Forks run one at a time on one thread. On Linux a fork is a vfork, whose
// thread waits in the kernel, holding its P, until the child has exec'd,
// which an exec on a hung network mount can make last for ever. So a
// server whose program or directory is on a filesystem not known to be
// local (NFS, SMB, 9p, FUSE…: the host looks with statfs) is started
// through the exec helper (ExecHelperArg): the supervisor forks and execs
// its own program, which changes directory and execs the server; should
// that hang, it hangs in the helper, which the supervisor already counts
// as the server (its pid, group and tag), not in the fork. The server is
// announced to the host once the exec is done; a Start that gives up
// waiting has it killed. As a second line, the supervisor runs with two Ps
// and collects garbage only itself, never while a fork is under way
// (sweeps slow down meanwhile), so an exec that hangs where no one
// expected it holds up only the spawns queued behind it (at most 1024;
// more are refused), not the reaping, sweeps or shutdown, unless the
// garbage of a very long hang reaches 1 GiB. The supervisor starts
// servers exactly as exec.Cmd would from the host: the same bytes of
// arguments and environment (the last of a repeated key), an empty or
// relative Dir taken from the host's working directory.
//
// The supervisor learns of the host's death from the socket's EOF, from
// Pdeathsig=SIGTERM on Linux, and by polling getppid (the only sign on
// macOS), and stops its servers at once, whatever fork may be hanging:
// SIGTERM to every server's group (also of those whose leftovers it is
// sweeping), SIGKILL after a grace period, then every remaining descendant
// it can find in /proc, and it exits. Close and
// Kill signal a server's group directly, so a wedged supervisor cannot
// keep a server alive; should Close still not see the end reported, it
// kills the supervisor as a last resort; one that stops reading the host's
// frames for 5 s is retired (killed, with its servers), and the Start that
// found it so tries once more under a new one.
// A supervisor that dies takes its servers with it (on Linux by their
// Pdeathsig; on macOS the host kills the groups of those it reported);
// their exit error says so, and the
// next Start launches a new one (a Start that raced the death retries
// once with it). What its servers left, now reparented to init, is found
// on Linux by the tag in /proc and killed by the host, pass after pass
// until none is left. A tag's base is random, picked by the host for each
// supervisor, so it is never another supervisor's, even one in another
// pid namespace.
//
// What remains uncovered: in plain mode, descendants of the server after the
// host's SIGKILL, and descendants that leave the server's group; on macOS,
// a descendant that leaves the group and is orphaned (no subreaper there);
// an orphan that cleared its tag when the supervisor is killed (not when
// the host is); on macOS, a server whose exec hangs for longer than the
// host-gone grace when the host dies (its pid is not known yet); on Linux,
// a process that forks a successor and exits, over and over, and moves to
// a new process group (setpgid or setsid) at every hop: no look at /proc
// sees it alive and no group keeps it (a cgroup per server, or a pid
// namespace, would); one that joined the supervisor's own group lives
// until the host dies; and, anywhere, work handed to a process outside the
// tree (a system daemon).
//
// On Windows each server is created suspended, put in a Job Object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, then resumed: the job kills the whole
// tree when its handle is closed, which Windows does when the host dies.
// Close sends CTRL_BREAK before terminating the job; no supervisor is used.
// ResolveCommand runs batch files such as npx.cmd through cmd /c there.
package proc
