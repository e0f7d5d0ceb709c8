// Package rawio moves bytes on a non-blocking descriptor in the runtime's
// poller with raw read(2) and write(2) calls, the poller still waiting
// when the descriptor is not ready (Linux only).
//
// Why: each os.File or net.Conn read or write is a system call the runtime
// brackets with entersyscall/exitsyscall, and when every processor was
// idle (a relay waiting for its server, a gateway between two calls)
// entersyscall also wakes the runtime's monitor thread (sysmon), which
// then ticks every ~20 µs while the process is busy: context switches on
// the cores the other side of the conversation needs. On a non-blocking
// descriptor a read or write never blocks — it returns EAGAIN and the
// poller waits — so the bracketing buys nothing. Deadlines and Close
// behave as the file's or connection's own (docs/benchmarks.md, "The pins
// check and the runtime's monitor thread", "serve --http reads and writes
// its sockets raw").
package rawio
