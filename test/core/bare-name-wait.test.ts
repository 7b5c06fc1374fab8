import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, type Over } from '../helpers/era-workbench.js';
import { fixtureServer } from '../helpers/workbench-process.js';

// A bare tool name (README "Tool names and calls") is resolved across the whole toolbox, but one server that hangs at
// start-up must not hold the call up (README "Downstream servers: lifecycle, timeouts and limits"): the call waits for
// the servers still starting no longer than open_toolbox would (`openWaitMs`), then resolves among those up.

const TRANSPORTS: Over[] = ['stdio', 'http'];

/** A healthy server beside one that never answers `initialize`; the connect limit is far beyond the client's wait. */
const config = {
  openWaitMs: 500,
  toolboxes: {
    mixed: {
      mcpServers: {
        healthy: fixtureServer('--name', 'healthy'),
        stuck: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 300_000 },
      },
    },
  },
};

/** The client gives up long before the stuck server's connect limit: a call that waits for it fails the test. */
const CLIENT_WAIT = { timeout: 30_000 };

const errorOf = (result: CallToolResult): { code?: string; retryable?: boolean; hint?: string } =>
  (result._meta?.['mcp-workbench/error'] ?? {}) as { code?: string; retryable?: boolean; hint?: string };

for (const over of TRANSPORTS) {
  for (const era of ERAS) {
    describe(`a bare name beside a server that hangs at start-up (${over}, ${era})`, () => {
      test('is served by the server that is up, and an unknown one names the server still starting', async () => {
        const wb = await startEra(over, era, config);
        try {
          const echoed = (await wb.client.callTool(
            { name: 'use_tool', arguments: { toolbox_name: 'mixed', tool_name: 'echo', arguments: { text: 'still here' } } },
            undefined,
            CLIENT_WAIT,
          )) as CallToolResult;
          assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
          assert.match(JSON.stringify(echoed.content), /still here/);

          const unknown = (await wb.client.callTool(
            { name: 'use_tool', arguments: { toolbox_name: 'mixed', tool_name: 'no_such_tool', arguments: {} } },
            undefined,
            CLIENT_WAIT,
          )) as CallToolResult;
          assert.equal(unknown.isError, true);
          const error = errorOf(unknown);
          assert.equal(error.code, 'TOOL_NOT_FOUND');
          assert.equal(error.retryable, true, 'its tools may be known shortly');
          assert.match(error.hint ?? '', /Still starting .*stuck/);
        } finally {
          await wb.close();
        }
      });
    });
  }
}
