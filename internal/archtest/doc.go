// Package archtest holds no code: its tests enforce the layout rules of
// this module (STYLE.md "pure cores, I/O at the edges").
//
// The pure packages — config, policy, trust, toolsurface (with
// toolsurface/shape and toolsurface/search), internal/filelock,
// internal/redact, internal/netguard, internal/termsafe and
// internal/lazyre — decide from data: inside this module they may depend
// only on one another, never on host, gateway or the CLI, and some may not
// reach the network, spawn processes or read the clock either.
//
// The front door (the module's root package) never depends on the
// gateway, the CLI or the gateway's telemetry (Prometheus, OpenTelemetry,
// gRPC): the gateway is its plug-in. host depends on none of the root,
// the gateway and the CLI. What examples/embed — an agent's MCP layer on
// the front door — links is a checked list, testdata/embed.deps (rewrite
// it with -update: review sees the diff), and its binary stays within
// 16 MiB.
//
// The test servers (internal/testserver, whose servers crash, hang and
// flood on purpose) are for tests only: no package outside the test-only
// list depends on them, and the built switchboard binary holds none of
// their names. The one server the binary ships is internal/demoserver.
//
// The tests ask `go list -deps -json` for the real import graph and name
// the offending import chain.
//
// Comments and docs (every Go file outside testdata, README.md, docs/*.md)
// cite no section of the product spec, which is not in the repository:
// they say the rule, or point at a package doc or a section of docs/.
// Sections of RFCs may be cited.
package archtest
