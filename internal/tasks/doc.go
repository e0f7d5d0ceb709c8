// Package tasks lets the host call tools that run as MCP tasks, on an SDK
// that does not know tasks: it is a fenced adapter at the connection
// layer, the only place in Switchboard that knows the tasks wire format.
//
// A task-augmented tool (execution.taskSupport "required", or "optional"
// by a server's setting) answers tools/call with a task instead of a
// result, and the client must follow the task to its end. The official Go
// SDK (v1.8.0) sends tools/call without the `task` field and cannot read a
// CreateTaskResult, so such a call fails (-32601, or an empty result). The
// adapter sits between the SDK and the wire, sees every message both ways,
// and for those calls:
//
//   - learns what the server offers from the raw initialize or
//     server/discover result (capabilities.tasks for 2025-11-25,
//     capabilities.extensions["io.modelcontextprotocol/tasks"] for
//     2026-07-28) and each tool's execution.taskSupport from the raw
//     tools/list results (mcp.Tool has no execution field);
//   - adds the `task` field to tools/call (2025-11-25), or declares the
//     extension in the request's client capabilities (2026-07-28, where
//     the server decides);
//   - keeps the CreateTaskResult from the SDK and follows the task with
//     tasks/get at the server's pollInterval, passing each status message
//     on as a notifications/progress for the call's progress token;
//     answers input_required (2025-11-25: tasks/result, on whose stream the
//     server sends its elicitation/create, which the SDK answers as ever;
//     2026-07-28: each of inputRequests is handed to the SDK as a request
//     of the server's, and its answer goes back in tasks/update); honours
//     the task's ttl; fetches the result (tasks/result, or tasks/get's
//     result);
//   - hands the SDK the final CallToolResult (or the task's JSON-RPC error)
//     as the response to the original request id, so the SDK's CallTool
//     returns it as though the call had been an ordinary one;
//   - turns the SDK's cancellation of that request (notifications/cancelled
//     for its id, which the SDK sends when the call's context ends) into
//     tasks/cancel.
//
// Everything above the SDK — permissions, audit, the breaker, the
// gateway — sees one ordinary call. A [Mark] in the call's context tells
// the host that the call became a task, so that a call cut by a dropped
// connection is never re-run (a task is never re-run on reconnect).
//
// Two forms, one core: [Wrap] wraps an mcp.Transport's connections
// (stdio, and the legacy HTTP+SSE transport), and [Adapter.RoundTripper]
// wraps the HTTP transport under the SDK's Streamable HTTP client, because
// that client's connection has unexported methods the SDK calls (a
// connection wrapper would hide them: no protocol version header, no
// standalone stream). On HTTP the adapter's own requests are POSTs that
// carry the original call's headers, and the call's response stream is
// kept open, with the progress and the final result written into it.
//
// The gateway's side (serve.go) offers tasks to its own task-capable
// clients, in both revisions, from one [Store]: on 2025-11-25
// [TakeTaskField] keeps a tools/call's `task` field past the SDK (which
// drops it) in _meta, and the gateway's receiving middleware runs such a
// call as a task ([Store.Start]), answering tasks/get, tasks/result,
// tasks/list and tasks/cancel; on 2026-07-28 the gateway offers the
// extension ([WithExtension]) and runs a call that declares it
// ([Declares]) as a task of the extension ([Store.StartExtension]),
// answering tasks/get (the result inline), tasks/update (the answers to
// the call's questions, which the call waits for with [Run.Ask]) and
// tasks/cancel. A task answers its owner only. [Adapter.TaskSupport] tells
// the host, and through it the gateway ([WithTaskSupport]), which tools
// run as tasks upstream.
//
// Cost: for a server that offers no tasks, a message costs a type switch,
// a string comparison and an atomic load each way (over HTTP, a scan of
// each POST body for a few method names); BenchmarkOverhead measures it.
//
// # Fenced, to be deleted
//
// This is the second measured exception to "do not hand-roll the
// protocol" (the first is internal/jsonl). It goes when a go-sdk release
// supports tasks (go-sdk issue #626: the `task` field and
// execution.taskSupport on its types, the tasks/* methods and the
// extension). Then:
//   - the host's dial stops wrapping transports ([Wrap] in
//     host/transport.go, [Adapter.RoundTripper] in host/remote.go) and
//     calls the SDK's own task-following call instead of CallTool;
//   - [Mark] is replaced by the SDK's own report that a call became a task
//     (host/call.go's never-re-run rule keeps its meaning);
//   - config's "tasks" setting maps onto the SDK's option for optional
//     tools;
//   - the gateway declares the SDK's server-side task support instead of
//     its Store (gateway/tasks.go; Transport and BindHTTP stop calling
//     TakeTaskField), and host.Tool's TaskSupport comes from the SDK's
//     Tool.Execution;
//   - this package and its test server (internal/testserver's "tasks")
//     are deleted; the host's tests of task tools (host/tasks_test.go)
//     and the gateway's (TestGatewayServesTaskToolsToPlainClients in
//     internal/cli; TestTaskCapableClient and TestExtensionTasks in
//     gateway) stay and must pass unchanged.
package tasks
