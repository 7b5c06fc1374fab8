#!/usr/bin/env node
// The floor for any stdio MCP proxy written in Node: it starts the server given on its command line and copies
// newline-delimited messages both ways, without parsing them. The bench puts it beside the workbench so the cost of
// the extra process hop itself is measured on the same machine in the same run.
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });

function copyLines(from, to) {
  let pending = '';
  from.on('data', (chunk) => {
    pending += chunk.toString('utf8');
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      to.write(pending.slice(0, newline + 1));
      pending = pending.slice(newline + 1);
    }
  });
}

copyLines(process.stdin, child.stdin);
copyLines(child.stdout, process.stdout);
process.stdin.on('end', () => {
  child.kill();
  process.exit(0);
});
child.on('exit', () => process.exit(0));
