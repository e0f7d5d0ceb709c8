// Package host is Switchboard's runtime: it turns a resolved configuration
// (package config) into running MCP servers and a live set of tools.
//
// Most agents want the front door instead, package switchboard (the
// module's root): it reads the settings, puts launch trust and the
// permission policy in front of a Host, and reloads both with the
// configuration. Use host directly to run servers under rules of your own.
//
// New starts every enabled, permitted server concurrently in the background
// and returns at once. Each server has a small state machine (the states of
// [State]: disabled, paused, missing, needs-approval, approval-stale,
// connecting, connected, error, circuit-open), always with a one-line
// reason, which Status reports.
//
// How the pieces fit:
//
//   - Launch trust is a Gate: a function that may hold a server in
//     needs-approval or approval-stale before anything runs. DefaultGate
//     holds repo-authored (project-scope) servers; the trust package plugs
//     in fingerprinted approvals.
//   - Transports come from the official Go SDK, except stdio framing, which
//     is internal/jsonl (the SDK's wire behaviour, one decode per message;
//     Options.SDKStdioTransport takes the SDK's mcp.IOTransport instead, and
//     internal/jsonl's package doc says which SDK change lets it go).
//     A tools/call to a stdio server that offers no tasks takes the relay
//     path (progress included): the host writes it on the connection
//     under an ID of its own (on 2026-07-28 with the client identity the
//     SDK sends) and decodes the answer in one pass into the same
//     *mcp.CallToolResult the SDK's CallTool would give; an answer that
//     asks questions goes on through CallTool without the answered round
//     being sent again (Options.SDKCalls turns the path off).
//     Stdio servers are spawned by internal/proc without a shell, in their own process group, with stderr
//     kept in a bounded buffer from the moment of spawn, and (when the
//     program calls MaybeRunSupervisor first in main) under one small
//     supervisor per process, shared by its Hosts, that reaps each
//     server's process tree, even if the host is SIGKILLed (internal/proc lists what it cannot reach). SSE and Streamable HTTP servers get their static headers and
//     those a headersHelper prints, read afresh at every connect; an
//     Options.Authorizer (package oauth's Client: OAuth 2.1) authorizes
//     the requests of those that set no Authorization header themselves.
//   - Connect is bounded by the startup timeout; a server that dies on the
//     2026-07-28 server/discover probe (one that read it, then died) is
//     retried once pinned to 2025-11-25. Other failures (an exit before
//     reading anything, DNS, a refused connection, 401) are not.
//     Client capabilities are empty unless the host serves them (roots when
//     there is a workspace, elicitation when there is a Prompter; sampling is
//     always refused).
//   - An unexpected close reconnects with backoff (Backoff: 1 s, 2 s, 4 s…,
//     at most MaxReconnectAttempts); meanwhile the server's last lists stay
//     served and calls wait for it within their timeout. A failed start is
//     tried again the same way (in state error, NextTry saying when). Once
//     those tries fail the server is in error and is tried again every
//     Options.RetryInterval (5 min) while the host runs. A call cut by the
//     drop is retried once only when its request never reached the
//     server, the tool declares idempotentHint, or an HTTP session was
//     forgotten (404); otherwise the error wraps ErrMayHaveRun.
//   - Each server has a circuit breaker (3 consecutive failures open it; after
//     a cooldown, 5 s doubling per failed probe up to 5 min, one probe is
//     let through) and TTL caches of its tool, prompt and resource lists,
//     invalidated by list_changed and reconnects.
//   - Time is read only through a Clock, so backoff, the breaker, the
//     caches and the bounded waits on a dying server are tested without
//     sleeping; the timeouts of a server's work run out in real time.
//
// Tools, Call, Prompts, GetPrompt, Resources, ResourceTemplates and
// ReadResource are what an agent uses; Pause, Resume and Retry change only the running session
// (Resume and Retry start a failed server at once). All
// methods are safe for concurrent use. Close stops every server: stdin is
// closed, then SIGTERM and SIGKILL reach the process group.
package host
