#!/usr/bin/env node
// Floors for any stdio MCP proxy written in Node. It starts the server given on its command line and sits between it
// and the client, doing no more than a proxy of its kind must:
//
//   null-proxy.mjs SERVER [ARGS…]             copies newline-delimited messages both ways without parsing them: the
//                                             cost of the extra process hop alone;
//   null-proxy.mjs --rewrite SERVER [ARGS…]   also does what any proxy that renames tools must: parses every
//                                             message, turns `use_tool {tool_name: "a__b__tool", arguments}` into
//                                             `tools/call {name: "tool"}` under an id of its own, maps the reply's
//                                             id back, and serialises both.
//
// The bench puts both beside the workbench so these costs are measured on the same machine in the same run.
import { spawn } from 'node:child_process';

const argv = process.argv.slice(2);
const rewrite = argv[0] === '--rewrite';
const [command, ...args] = rewrite ? argv.slice(1) : argv;
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });

function lines(from, onLine) {
  let pending = '';
  from.on('data', (chunk) => {
    pending += chunk.toString('utf8');
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      onLine(pending.slice(0, newline + 1));
      pending = pending.slice(newline + 1);
    }
  });
}

if (!rewrite) {
  lines(process.stdin, (line) => child.stdin.write(line));
  lines(child.stdout, (line) => process.stdout.write(line));
} else {
  const ids = new Map();
  let next = 0;
  lines(process.stdin, (line) => {
    const message = JSON.parse(line);
    if (message.method === 'tools/call' && message.params?.name === 'use_tool') {
      const id = `p-${next++}`;
      ids.set(id, message.id);
      const { tool_name: name, arguments: toolArgs } = message.params.arguments;
      const request = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: name.split('__').slice(2).join('__'), arguments: toolArgs } };
      child.stdin.write(`${JSON.stringify(request)}\n`);
    } else {
      child.stdin.write(`${JSON.stringify(message)}\n`);
    }
  });
  lines(child.stdout, (line) => {
    const message = JSON.parse(line);
    if (typeof message.id === 'string' && ids.has(message.id)) {
      const id = ids.get(message.id);
      ids.delete(message.id);
      message.id = id;
    }
    process.stdout.write(`${JSON.stringify(message)}\n`);
  });
}

process.stdin.on('end', () => {
  child.kill();
  process.exit(0);
});
child.on('exit', () => process.exit(0));
