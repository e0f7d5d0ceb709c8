// An MCP Apps-capable client of the official TypeScript SDK driving the
// Switchboard gateway (internal/cli/serve_apps_npm_test.go). Usage:
//   SDK=<path of @modelcontextprotocol/sdk> node ts_apps_client.mjs <switchboard> <args…>
// It declares the MCP Apps extension, lists tools and resources, reads the
// ui:// resource each tool links to as a host rendering the App would, and
// calls the tools, printing one JSON object with what it saw on stdout.
import { pathToFileURL } from "node:url";

const sdk = (p) => import(pathToFileURL(`${process.env.SDK}/dist/esm/${p}`).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");

const [target, ...rest] = process.argv.slice(2);
const client = new Client(
  { name: "ts-apps-test", version: "1.0.0" },
  { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } },
);
await client.connect(new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" }));
const out = { tools: {}, resources: [], reads: {}, calls: {} };
for (const t of (await client.listTools()).tools) {
  out.tools[t.name] = { meta: t._meta ?? null };
}
out.resources = (await client.listResources()).resources.map((r) => ({ uri: r.uri, mimeType: r.mimeType ?? null }));
for (const [name, t] of Object.entries(out.tools)) {
  const uri = t.meta?.ui?.resourceUri;
  if (!uri) continue;
  const r = await client.readResource({ uri });
  out.reads[uri] = r.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, meta: c._meta ?? null, text: c.text ?? "" }));
  const res = await client.callTool({ name, arguments: {} });
  out.calls[name] = {
    isError: !!res.isError,
    structuredContent: res.structuredContent ?? null,
    text: res.content.filter((c) => c.type === "text").map((c) => c.text).join(""),
  };
}
await client.close();
console.log(JSON.stringify(out));
