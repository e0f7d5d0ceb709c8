// A client of the official TypeScript SDK driving the Switchboard gateway
// (internal/cli/serve_npm_test.go). Usage:
//   SDK=<path of @modelcontextprotocol/sdk> node ts_client.mjs stdio <switchboard> <args…>
//   SDK=… TOKEN=… node ts_client.mjs http <url>
// It lists tools, calls an allowed, a denied and an unlisted tool (answering
// the permission elicitation with ANSWER, default "once") and prints one
// JSON object with what it saw on stdout. CALLS, a JSON array of
// [name, arguments] pairs, replaces the calls; a call the server answers
// with a protocol error is recorded as {error: message}. NO_ELICIT=1
// declares no elicitation: a question then waits elsewhere (the console).
import { pathToFileURL } from "node:url";

const sdk = (p) => import(pathToFileURL(`${process.env.SDK}/dist/esm/${p}`).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ElicitRequestSchema, ToolListChangedNotificationSchema } = await sdk("types.js");

const [mode, target, ...rest] = process.argv.slice(2);
const elicit = process.env.NO_ELICIT !== "1";
const client = new Client({ name: "ts-gateway-test", version: "1.0.0" }, { capabilities: elicit ? { elicitation: {} } : {} });
const out = { asked: [], calls: {} };
if (elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out.asked.push(req.params.message);
    return { action: "accept", content: { decision: process.env.ANSWER || "once" } };
  });
}
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {});

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" });
} else {
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.TOKEN}` } },
  });
}
await client.connect(transport);
out.protocol = transport.protocolVersion ?? null;
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const calls = process.env.CALLS ? JSON.parse(process.env.CALLS) : [
  ["alpha__echo", { text: "from typescript" }],
  ["alpha__add", { a: 1, b: 2 }],
  ["beta__pid", {}],
];
for (const [name, args] of calls) {
  try {
    const r = await client.callTool({ name, arguments: args });
    out.calls[name] = { isError: !!r.isError, text: text(r) };
  } catch (e) {
    out.calls[name] = { isError: true, error: String(e?.message ?? e) };
  }
}
out.prompts = (await client.listPrompts()).prompts.map((p) => p.name).sort();
await client.close();
console.log(JSON.stringify(out));
