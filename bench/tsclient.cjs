// tsclient.cjs drives one MCP stdio server with the official TypeScript SDK
// client, for the bench program (bench/main.go). It takes one JSON argument:
//
//   {"sdk_root": "<folder whose node_modules holds @modelcontextprotocol/sdk>",
//    "mode": "latency" | "cold", "n": 2000, "warmup": 200,
//    "command": "...", "args": [...], "tool": "echo", "arguments": {...}}
//
// latency: connect, make warmup calls, then n timed calls one after another;
// print one JSON line {"init_ms", "p50_us", "p99_us", "calls"} and keep the
// session open until stdin closes, so the caller can read this process's
// RSS from /proc; then close and exit.
// cold: connect, make one call, close, exit 0 (the caller times it all).
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

async function main() {
  const cfg = JSON.parse(process.argv[2]);
  const req = createRequire(path.join(cfg.sdk_root, 'package.json'));
  const { Client } = req('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = req('@modelcontextprotocol/sdk/client/stdio.js');

  const t0 = process.hrtime.bigint();
  const transport = new StdioClientTransport({
    command: cfg.command, args: cfg.args || [], stderr: 'inherit',
    env: { ...process.env, ...(cfg.env || {}) },
  });
  const client = new Client({ name: 'bench-ts', version: '0.0.0' }, { capabilities: {} });
  await client.connect(transport);
  const initMs = Number(process.hrtime.bigint() - t0) / 1e6;

  const call = async () => {
    const res = await client.callTool({ name: cfg.tool, arguments: cfg.arguments || {} });
    if (res.isError) throw new Error('tool error: ' + JSON.stringify(res.content));
  };

  if (cfg.mode === 'cold') {
    await call();
    await client.close();
    return;
  }

  for (let i = 0; i < (cfg.warmup || 0); i++) await call();
  const n = cfg.n || 1000;
  const ds = new Array(n);
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    await call();
    ds[i] = Number(process.hrtime.bigint() - s) / 1e3;
  }
  ds.sort((a, b) => a - b);
  const pct = (p) => ds[Math.floor(((n - 1) * p) / 100)];
  process.stdout.write(JSON.stringify({ init_ms: initMs, p50_us: pct(50), p99_us: pct(99), calls: n }) + '\n');

  // Hold the session until the caller has read our RSS and closes stdin.
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.on('end', resolve).on('close', resolve));
  await client.close();
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write('tsclient: ' + (err && err.stack || err) + '\n');
  process.exit(1);
});
