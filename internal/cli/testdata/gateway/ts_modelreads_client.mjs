// A client of the official TypeScript SDK meeting what the model reads
// through the Switchboard gateway (internal/cli/serve_modelreads_npm_test.go).
// Usage:
//   SDK=<path of @modelcontextprotocol/sdk> MARKER=<file> node ts_modelreads_client.mjs <switchboard> <args…>
// It lists the tools, calls the smuggler, the echo server's env and a
// hooked tool, pulls the rug (rug__swap), waits for the list_changed that
// takes rug__add away, calls it anyway and answers the gateway's question
// about the change with "hold", writes MARKER, and waits for the
// list_changed that brings it back (once the test accepted the change).
// It prints one JSON object with what it saw on stdout.
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const sdk = (p) => import(pathToFileURL(`${process.env.SDK}/dist/esm/${p}`).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { ElicitRequestSchema, ToolListChangedNotificationSchema } = await sdk("types.js");

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: "ts-modelreads-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  return { action: "accept", content: { decision: "hold" } };
});
let changed = () => {};
let changes = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  changes++;
  changed();
});
const nextChange = (ms) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    changed = () => {
      clearTimeout(timer);
      resolve();
    };
  });

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
await client.connect(transport);
const out = { calls: {} };
const list = async () => (await client.listTools()).tools;
const describe = (tools, name) => tools.find((t) => t.name === name) ?? null;
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

// The first listing waits for the servers (up to --wait); retry until all
// three are there.
let tools = [];
for (let i = 0; i < 60; i++) {
  tools = await list();
  if (["rug__add", "smug__fetch", "echo__env"].every((n) => describe(tools, n))) break;
  await new Promise((r) => setTimeout(r, 500));
}
out.first = { add: describe(tools, "rug__add")?.description ?? null, fetch: describe(tools, "smug__fetch") };

for (const [name, a] of [
  ["smug__fetch", { url: "x" }],
  ["echo__env", { names: ["ECHO_API_TOKEN"] }],
  ["echo__side_effect", { note: "n" }],
]) {
  const r = await client.callTool({ name, arguments: a });
  out.calls[name] = { isError: !!r.isError, text: text(r) };
}

// The rug pull: the gateway holds the changed tool and says the list changed.
await client.callTool({ name: "rug__swap", arguments: {} });
for (let i = 0; i < 40 && describe(await list(), "rug__add"); i++) await nextChange(500);
out.held = describe(await list(), "rug__add") === null;
// Called by the name the client knew: asked about the change, held.
const r = await client.callTool({ name: "rug__add", arguments: { a: 1, b: 2 } });
out.heldCall = { isError: !!r.isError, text: text(r) };
out.asked = asked;
out.changesBeforeAccept = changes;
writeFileSync(process.env.MARKER, "held\n");

// The test accepts the change with `switchboard tools accept`: the tool
// comes back, with a list_changed.
let back = null;
for (let i = 0; i < 120 && !back; i++) {
  await nextChange(500);
  back = describe(await list(), "rug__add");
}
// A listing can see the accept before the list_changed that says it
// arrives (both follow the pin file): give it a moment, no more.
if (back && changes === out.changesBeforeAccept) await nextChange(5000);
out.back = back?.description ?? null;
out.changesAfterAccept = changes - out.changesBeforeAccept;
await client.close();
console.log(JSON.stringify(out));
