import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ERAS, startEra, type Over } from '../helpers/era-workbench.js';
import { errorOf, healthyUp, useTool as use } from '../helpers/hung-calls.js';
import { fixtureServer } from '../helpers/workbench-process.js';

// A bare name through a toolset (README "Toolsets") waits for the toolset's servers as a bare name in a toolbox does
// (README "Tool names and calls"): once `openWaitMs` has passed, a server that is up and has the name serves it, and a
// name none of them has is answered then, naming the server still starting, not after that server's whole connect.

const TRANSPORTS: Over[] = ['stdio', 'http'];

/** A healthy server beside one whose handshake never comes, both in a toolset. */
const toolsetConfig = {
  openWaitMs: 2_000,
  useToolWaitMs: 600_000,
  toolboxes: {
    mixed: {
      mcpServers: {
        healthy: fixtureServer('--name', 'healthy'),
        stuck: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 600_000 },
      },
    },
  },
  toolsets: { all: { tools: ['mixed__*'] } },
};

for (const over of TRANSPORTS) {
  for (const era of ERAS) {
    describe(`a bare name while a server hangs at its first start, through a toolset (${over}, ${era})`, () => {
      test('is served by the server that is up, past openWaitMs, as through the toolbox', async () => {
        const wb = await startEra(over, era, toolsetConfig);
        try {
          await healthyUp(wb.client);
          const echoed = await use(wb.client, 'all', 'echo', { text: 'through the toolset' });
          assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
          assert.match(JSON.stringify(echoed.content), /through the toolset/);
        } finally {
          await wb.close();
        }
      });

      test('a name no server that is up has is answered past openWaitMs, naming the server still starting', async () => {
        const wb = await startEra(over, era, toolsetConfig);
        try {
          await healthyUp(wb.client);
          const result = await use(wb.client, 'all', 'ecoh');
          assert.deepEqual([errorOf(result).code, errorOf(result).retryable, errorOf(result).server], ['CONNECT_TIMEOUT', true, 'stuck'], JSON.stringify(result));
          const text = JSON.stringify(result.content);
          assert.match(text, /Server \\"stuck\\" is still starting/, text);
          assert.match(text, /Closest names that are up: mixed__healthy__echo/, text);
        } finally {
          await wb.close();
        }
      });
    });
  }
}
