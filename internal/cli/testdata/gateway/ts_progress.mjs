// A client of the official TypeScript SDK calling one tool CALLS times,
// one after another, through the Switchboard gateway with a progress token
// (internal/cli/serve_progress_npm_test.go). Usage:
//   SDK=<path of @modelcontextprotocol/sdk> TOOL=<name> TOOL_ARGS=<json> CALLS=<n> node ts_progress.mjs stdio <switchboard> <args…>
//   SDK=… TOOL=… TOOL_ARGS=… CALLS=… node ts_progress.mjs http <url>
// It prints one JSON object: {calls: [{isError, text, progress: [progress values]}]}.
import { pathToFileURL } from "node:url";

const sdk = (p) => import(pathToFileURL(`${process.env.SDK}/dist/esm/${p}`).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { CallToolResultSchema } = await sdk("types.js");

const [mode, target, ...rest] = process.argv.slice(2);
const client = new Client({ name: "ts-gateway-progress", version: "1.0.0" }, { capabilities: {} });
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target));
await client.connect(transport);
const calls = [];
for (let i = 0; i < Number(process.env.CALLS); i++) {
  const progress = [];
  const r = await client.callTool(
    { name: process.env.TOOL, arguments: JSON.parse(process.env.TOOL_ARGS) },
    CallToolResultSchema,
    { onprogress: (p) => progress.push(p.progress), timeout: 120000 },
  );
  calls.push({ isError: !!r.isError, text: r.content.filter((c) => c.type === "text").map((c) => c.text).join(""), progress });
}
await client.close();
console.log(JSON.stringify({ calls }));
