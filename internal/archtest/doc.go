// Package archtest holds no code: its test enforces the layout rules of
// this module (STYLE.md "pure cores, I/O at the edges"). The pure packages
// — config, policy, trust, toolsurface, internal/filelock, internal/redact,
// internal/netguard and internal/termsafe — decide from data: inside this module they may depend
// only on one another, never on host, gateway or the CLI, and some may not
// reach the network, spawn processes or read the clock either. oauth does
// I/O, but host takes it as a plug-in: it may not depend on host, gateway,
// the CLI or the front door. The test
// asks `go list -deps -json` for the real import graph and names the
// offending import chain.
package archtest
