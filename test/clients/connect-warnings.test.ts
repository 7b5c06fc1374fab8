import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { logLines } from '../helpers/log-lines.js';
import { fixtureServer } from '../helpers/workbench-process.js';

// A server that cannot start is warned about on stderr once per cause (README "Downstream servers: lifecycle, timeouts
// and limits"). Over `serve --http` each session has connections of its own; the warning is still once per workbench
// process, not once per session.

const CLIENT_WAIT = { timeout: 60_000 };

const config = {
  toolboxes: { mixed: { mcpServers: { stuck: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 1_000 } } } },
};

/** A call by full name joins the server's start and fails when its handshake limit passes. */
async function failsToStart(client: Client): Promise<void> {
  const call = { toolbox_name: 'mixed', tool_name: 'mixed__stuck__echo', arguments: { text: 'x' } };
  const result = (await client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
  const error = (result._meta?.['mcp-workbench/error'] ?? {}) as { code?: string; failure?: { kind?: string } };
  assert.deepEqual([error.code, error.failure?.kind], ['CONNECT_TIMEOUT', 'handshake-timeout'], JSON.stringify(result));
}

for (const era of ERAS) {
  describe(`a server that hangs at start-up, over serve --http with several sessions (${era})`, () => {
    test('is warned about once per process, however many sessions fail to start it', async () => {
      const wb = await startEra('http', era, config, undefined, {}, { env: { WORKBENCH_LOG_FORMAT: 'json' } });
      try {
        const sessions = [wb.client, await wb.another(), await wb.another()];
        for (const session of sessions) await failsToStart(session);
        const warned = logLines(wb.stderr()).filter((l) => l.level === 'warn' && /did not complete the MCP handshake/.test(l.message));
        assert.equal(warned.length, 1, wb.stderr());
      } finally {
        await wb.close();
      }
    });
  });
}
