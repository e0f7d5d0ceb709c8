// A client of the official TypeScript SDK calling one tool through the
// Switchboard gateway (internal/cli/serve_tasks_npm_test.go), with a
// progress token. Usage:
//   SDK=<path of @modelcontextprotocol/sdk> TOOL=<name> TOOL_ARGS=<json> node ts_call.mjs stdio <switchboard> <args…>
//   SDK=… TOOL=… TOOL_ARGS=… node ts_call.mjs http <url>
// It prints one JSON object: {isError, text, progress: [messages]}.
import { pathToFileURL } from "node:url";

const sdk = (p) => import(pathToFileURL(`${process.env.SDK}/dist/esm/${p}`).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { CallToolResultSchema } = await sdk("types.js");

const [mode, target, ...rest] = process.argv.slice(2);
const client = new Client({ name: "ts-gateway-call", version: "1.0.0" }, { capabilities: {} });
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target));
await client.connect(transport);
const progress = [];
const r = await client.callTool(
  { name: process.env.TOOL, arguments: JSON.parse(process.env.TOOL_ARGS) },
  CallToolResultSchema,
  { onprogress: (p) => progress.push(p.message ?? ""), timeout: 120000 },
);
const text = r.content.filter((c) => c.type === "text").map((c) => c.text).join("");
await client.close();
console.log(JSON.stringify({ isError: !!r.isError, text, progress }));
