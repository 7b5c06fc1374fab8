import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TRANSPORTS } from '../helpers/both-transports.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { stopChild } from '../helpers/http-servers.js';
import { node, startWorkbench, textOf } from '../helpers/workbench-process.js';

// A modern-only (2026-07-28) downstream server over Streamable HTTP: the SDK's era probe picks the modern era over
// HTTP, calls carry the `_meta` envelope, and its input requests reach the (legacy, SDK v1) client of the workbench.

const modernFixture = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));

async function startModernHttp(): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(node, [modernFixture, '--http'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the modern HTTP fixture did not start:\n${output}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /MODERN_HTTP_LISTENING (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the modern HTTP fixture exited with ${code}:\n${output}`));
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => stopChild(child) };
}

for (const transport of TRANSPORTS) {
  describe(`a modern-only Streamable HTTP server downstream, workbench over ${transport}`, () => {
    it('is connected in the modern era; echo and an elicitation round trip work', async () => {
      const server = await startModernHttp();
      const config = { toolboxes: { web: { mcpServers: { modern: { type: 'http', url: server.url } } } } };
      const caps = { capabilities: { elicitation: {} } };
      let close: () => Promise<void>;
      let client;
      if (transport === 'stdio') {
        const wb = await startWorkbench(config, { clientCapabilities: caps });
        client = wb.client;
        close = wb.close;
      } else {
        const wb = await startHttpWorkbench(config, ['--http', '0']);
        const session = await wb.connect({}, caps);
        client = session.client;
        close = async () => {
          await session.close().catch(() => {});
          await wb.stop();
        };
      }
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer: 'over http' } }));
      const use = (tool: string, args: Record<string, unknown>) =>
        client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'web', tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
      try {
        const echoed = await use('web__modern__echo', { text: 'hi' });
        assert.equal(textOf(echoed), 'echo: hi', textOf(echoed));
        const asked = await use('web__modern__ask', { question: 'really?' });
        assert.equal(textOf(asked), 'answer: over http', textOf(asked));
      } finally {
        await close();
        await server.close();
      }
    });
  });
}
