import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { Client, LoggingMessageNotification } from '@modelcontextprotocol/client';
import { startEra, type Over } from '../helpers/era-workbench.js';
import { fixtureServer, node } from '../helpers/workbench-process.js';

// Log messages for a client of MCP 2026-07-28 (README "Protocol eras"): such a client has no stream outside its own
// calls, and asks for a call's log messages with `io.modelcontextprotocol/logLevel` in the call's `_meta`. The called
// server's messages at or above that level come on the call's own stream, from a handshake-era server and from a
// modern one (which is sent the level, since it logs for a request only when asked).

const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const CONFIG = {
  toolboxes: { logs: { mcpServers: { legacy: fixtureServer(), modern: { command: node, args: [modern, '--log-tool'] } } } },
};
const LEVEL = 'io.modelcontextprotocol/logLevel';

function collect(client: Client): LoggingMessageNotification['params'][] {
  const seen: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler('notifications/message', (n) => void seen.push(n.params));
  return seen;
}

async function logCall(client: Client, server: string, level: string, message: string, logLevel?: string): Promise<void> {
  const result = await client.callTool({
    name: 'use_tool',
    arguments: { toolbox_name: 'logs', tool_name: `logs__${server}__log`, arguments: { level, message } },
    ...(logLevel !== undefined && { _meta: { [LEVEL]: logLevel } }),
  });
  assert.notEqual(result.isError, true, JSON.stringify(result));
}

for (const over of ['stdio', 'http'] as Over[]) {
  describe(`a 2026-07-28 client's log messages (${over})`, () => {
    it('come on the call that asked for them, at or above its level, from a legacy and a modern server', async () => {
      let seen: LoggingMessageNotification['params'][] = [];
      const wb = await startEra(over, 'modern', CONFIG, (client) => void (seen = collect(client)));
      try {
        for (const server of ['legacy', 'modern']) {
          seen.length = 0;
          await logCall(wb.client, server, 'warning', `${server}-asked`, 'info');
          await logCall(wb.client, server, 'info', `${server}-unasked`);
          await logCall(wb.client, server, 'info', `${server}-below`, 'error');
          const texts = seen.map((p) => String(p.data));
          assert.deepEqual(texts, [`${server}-asked`], `${server}: ${JSON.stringify(seen)}`);
          assert.equal(seen[0]!.level, 'warning');
          assert.match(String(seen[0]!.logger), new RegExp(`^logs/${server}`));
        }
      } finally {
        await wb.close();
      }
    });
  });
}

describe("a 2026-07-28 client's log messages from a shared server (http)", () => {
  it('come on its call when its calls are the only ones in flight on the shared connection', async () => {
    let seen: LoggingMessageNotification['params'][] = [];
    const config = { toolboxes: { logs: { mcpServers: { legacy: { ...fixtureServer(), shared: true } } } } };
    const wb = await startEra('http', 'modern', config, (client) => void (seen = collect(client)));
    try {
      await logCall(wb.client, 'legacy', 'error', 'shared-asked', 'warning');
      await logCall(wb.client, 'legacy', 'info', 'shared-below', 'warning');
      assert.deepEqual(seen.map((p) => String(p.data)), ['shared-asked']);
    } finally {
      await wb.close();
    }
  });
});
