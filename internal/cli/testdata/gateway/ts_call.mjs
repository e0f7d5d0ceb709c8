// A client of the official TypeScript SDK calling one tool through the
// Switchboard gateway (internal/cli/serve_tasks_npm_test.go,
// serve_progress_npm_test.go), with a progress token. Usage:
//   SDK=<path of @modelcontextprotocol/sdk> TOOL=<name> TOOL_ARGS=<json> node ts_call.mjs stdio <switchboard> <args…>
//   SDK=… TOOL=… TOOL_ARGS=… node ts_call.mjs http <url>
// It prints one JSON object: {isError, text, progress: [messages]}. With
// CALLS=<n> it calls the tool n times, one after another, and prints
// {calls: [{isError, text, progress: [progress values]}, …]}.
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
const call = async (progressOf) => {
  const progress = [];
  const r = await client.callTool(
    { name: process.env.TOOL, arguments: JSON.parse(process.env.TOOL_ARGS) },
    CallToolResultSchema,
    { onprogress: (p) => progress.push(progressOf(p)), timeout: 120000 },
  );
  const text = r.content.filter((c) => c.type === "text").map((c) => c.text).join("");
  return { isError: !!r.isError, text, progress };
};
if (process.env.CALLS) {
  const calls = [];
  for (let i = 0; i < Number(process.env.CALLS); i++) calls.push(await call((p) => p.progress));
  await client.close();
  console.log(JSON.stringify({ calls }));
} else {
  const res = await call((p) => p.message ?? "");
  await client.close();
  console.log(JSON.stringify(res));
}
