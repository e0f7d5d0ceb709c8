// A task-capable client of the official TypeScript SDK (its experimental
// tasks API, protocol 2025-11-25) running calls as tasks through the
// Switchboard gateway (internal/cli/serve_tasks_npm_test.go), and a second
// client of the same gateway trying to reach the first one's tasks. Usage:
//   SDK=<path of @modelcontextprotocol/sdk> TOOL=<name> TOOL_ARGS=<json> LONG=<name> LONG_ARGS=<json> ASKED=… ASKED_ARGS=… \
//     node ts_task.mjs stdio <switchboard> <args…>
//   SDK=… node ts_task.mjs http <url>
// TOOL runs to its end as a task; ASKED too, once the client has allowed
// it when asked; LONG is started as a task and cancelled.
// It prints one JSON object (see below).
import { pathToFileURL } from "node:url";

const sdk = (p) => import(pathToFileURL(`${process.env.SDK}/dist/esm/${p}`).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ElicitRequestSchema } = await sdk("types.js");

const [mode, target, ...rest] = process.argv.slice(2);
let asks = 0;
const connect = async (name) => {
  const client = new Client({ name, version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  // The gateway's permission question (ASKED has no rule): allowed once.
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asks++;
    return { action: "accept", content: { decision: "once" } };
  });
  const transport = mode === "stdio"
    ? new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));
  await client.connect(transport);
  return client;
};
const failure = async (f) => {
  try {
    await f();
    return null;
  } catch (e) {
    return String(e.message ?? e);
  }
};

const out = { capability: null, taskId: null, statuses: [], isError: null, text: "", error: null };
try {
  const a = await connect("ts-task-a");
  out.capability = a.getServerCapabilities()?.tasks ?? null;
  const stream = a.experimental.tasks.callToolStream(
    { name: process.env.TOOL, arguments: JSON.parse(process.env.TOOL_ARGS) },
    undefined,
    { task: { ttl: 600000 }, timeout: 120000 },
  );
  for await (const m of stream) {
    if (m.type === "taskCreated") out.taskId = m.task.taskId;
    else if (m.type === "taskStatus") out.statuses.push(m.task.status);
    else if (m.type === "result") {
      out.isError = !!m.result.isError;
      out.text = m.result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
      out.relatedTask = m.result._meta?.["io.modelcontextprotocol/related-task"]?.taskId ?? null;
    } else if (m.type === "error") out.error = String(m.error.message ?? m.error);
  }
  out.ownGet = (await a.experimental.tasks.getTask(out.taskId)).status;

  // A call whose permission is asked: the question reaches this client
  // while the task runs, after its tools/call was answered.
  for await (const m of a.experimental.tasks.callToolStream(
    { name: process.env.ASKED, arguments: JSON.parse(process.env.ASKED_ARGS) },
    undefined,
    { task: {}, timeout: 120000 },
  )) {
    if (m.type === "result") out.askedText = m.result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
    else if (m.type === "error") out.askedError = String(m.error.message ?? m.error);
  }
  out.asks = asks;
  out.ownList = (await a.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);

  // The long one, started and cancelled.
  const long = a.experimental.tasks.callToolStream(
    { name: process.env.LONG, arguments: JSON.parse(process.env.LONG_ARGS) },
    undefined,
    { task: { ttl: 600000 }, timeout: 120000 },
  );
  const created = (await long.next()).value;
  out.longCreated = created?.type === "taskCreated";
  const longId = created?.task?.taskId;

  // Another client: none of a's tasks is there for it.
  const b = await connect("ts-task-b");
  out.otherGet = await failure(() => b.experimental.tasks.getTask(out.taskId));
  out.otherResult = await failure(() => b.experimental.tasks.getTaskResult(out.taskId));
  out.otherCancel = await failure(() => b.experimental.tasks.cancelTask(longId));
  out.otherList = (await b.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
  await b.close();

  out.longCancel = (await a.experimental.tasks.cancelTask(longId)).status;
  out.longGet = (await a.experimental.tasks.getTask(longId)).status;
  out.longResult = await failure(() => a.experimental.tasks.getTaskResult(longId));
  await long.return();
  await a.close();
} catch (e) {
  out.fatal = String(e.stack ?? e);
}
console.log(JSON.stringify(out));
process.exit(0); // a failure above may leave a connection open
