// A client of the official TypeScript SDK that checks how the Switchboard
// gateway answers while one of its servers is still starting
// (internal/cli/serve_firstlist_test.go). Usage:
//   SDK=<path of @modelcontextprotocol/sdk> RELEASE=<file> node ts_late_client.mjs stdio <switchboard> <args…>
//   SDK=… RELEASE=<file> node ts_late_client.mjs http <url>
//   SDK=… RELEASE=<file> READY=<file> URL_FILE=<file> node ts_late_client.mjs http
// The last form creates READY once the SDK is loaded and then waits for
// URL_FILE to hold the gateway's URL, so that the test can start the
// gateway when the client is ready to list at once.
// It lists the tools once (the first list, and how long it took), then
// creates RELEASE — which lets the slow server start — and lists again on
// every notifications/tools/list_changed until every tool of WANT (served
// names, comma-separated) is listed or 60 s pass. It prints one JSON object on stdout.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const sdk = (p) => import(pathToFileURL(`${process.env.SDK}/dist/esm/${p}`).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ToolListChangedNotificationSchema } = await sdk("types.js");

const [mode, given, ...rest] = process.argv.slice(2);
let target = given;
if (mode === "http" && process.env.URL_FILE) {
  writeFileSync(process.env.READY, "");
  while (!existsSync(process.env.URL_FILE)) await new Promise((r) => setTimeout(r, 10));
  target = readFileSync(process.env.URL_FILE, "utf8").trim();
}
const want = process.env.WANT.split(",");
const client = new Client({ name: "ts-late-test", version: "1.0.0" }, { capabilities: {} });
const out = { changes: 0 };
let wake = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  out.changes++;
  wake();
});

const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));
await client.connect(transport);
out.protocol = transport.protocolVersion ?? null;
const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();

const start = performance.now();
out.first = await names();
out.firstMs = performance.now() - start;

writeFileSync(process.env.RELEASE, "");
const deadline = Date.now() + 60000;
out.later = out.first;
while (!want.every((w) => out.later.includes(w)) && Date.now() < deadline) {
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, deadline - Date.now());
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  out.later = await names();
}
await client.close();
console.log(JSON.stringify(out));
