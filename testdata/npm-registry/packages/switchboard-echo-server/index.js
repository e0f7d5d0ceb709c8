#!/usr/bin/env node
// A tiny MCP server over stdio (newline-delimited JSON-RPC), with no
// dependencies, so that a local registry can serve all of it: one tool,
// echo, which answers with its text.
'use strict';
const readline = require('readline');

const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
const tools = [{
  name: 'echo',
  description: 'Answers with its text.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
}];

// SWITCHBOARD_ECHO_START_DELAY_MS makes it slow to start, as a server that
// prepares something on its first run is: it reads nothing until then.
const serve = () => readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    return send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
  }
  if (req.id === undefined) return; // a notification
  const reply = (result) => send({ jsonrpc: '2.0', id: req.id, result });
  switch (req.method) {
    case 'initialize':
      return reply({
        protocolVersion: (req.params && req.params.protocolVersion) || '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'switchboard-echo-server', version: '1.0.0' },
      });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools });
    case 'tools/call': {
      const p = req.params || {};
      if (p.name !== 'echo') {
        return send({ jsonrpc: '2.0', id: req.id, error: { code: -32602, message: 'unknown tool ' + p.name } });
      }
      const text = String((p.arguments && p.arguments.text) || '');
      return reply({ content: [{ type: 'text', text }] });
    }
    default:
      return send({ jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'method not found: ' + req.method } });
  }
});

setTimeout(serve, Number(process.env.SWITCHBOARD_ECHO_START_DELAY_MS) || 0);
