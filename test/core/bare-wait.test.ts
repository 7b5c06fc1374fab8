import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ERAS, startEra, type Over } from '../helpers/era-workbench.js';
import { errorOf, healthyUp, useTool as use } from '../helpers/hung-calls.js';
import { fixtureServer, tempDir } from '../helpers/workbench-process.js';

// A bare name in a toolbox (README "Tool names and calls") waits up to `useToolWaitMs` for a server whose last known
// list (the catalog cache) has it, but for one whose last start timed out only up to `openWaitMs`, as its full name
// would (README "Downstream servers: lifecycle, timeouts and limits"): it is answered as starting again, retryable.

const TRANSPORTS: Over[] = ['stdio', 'http'];

for (const over of TRANSPORTS) {
  for (const era of ERAS) {
    describe(`a bare name in a toolbox whose server's cached list has it, after its last start timed out (${over}, ${era})`, () => {
      test('waits at most openWaitMs, as its full name does, and says it is starting again', async () => {
        const temp = await tempDir('wb-bare-cached-');
        try {
          // The same command and args both times (one catalog cache entry): the server lists gen_0000 (a name only it
          // has) in the first run and hangs from the second on.
          const hangFlag = join(temp.dir, 'hang-now');
          const config = {
            openWaitMs: 300,
            useToolWaitMs: 600_000,
            toolboxes: {
              mixed: {
                mcpServers: {
                  healthy: fixtureServer('--name', 'healthy'),
                  stuck: { ...fixtureServer('--never-initialize-if', hangFlag, '--tools', '1'), connectTimeoutMs: 10_000 },
                },
              },
            },
          };
          const env = { MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache') };
          const first = await startEra(over, era, config, undefined, {}, { env });
          try {
            // Full names wait for their servers (openWaitMs is short), whose lists then go to the catalog cache.
            await healthyUp(first.client);
            const listed = await use(first.client, 'mixed', 'mixed__stuck__gen_0000');
            assert.notEqual(listed.isError, true, JSON.stringify(listed));
          } finally {
            await first.close();
          }
          await writeFile(hangFlag, '');
          const wb = await startEra(over, era, config, undefined, {}, { env });
          try {
            await healthyUp(wb.client);
            // Its first start in this process waits for it (the call joins the start) until the handshake limit.
            const full = await use(wb.client, 'mixed', 'mixed__stuck__gen_0000');
            assert.equal(errorOf(full).code, 'CONNECT_TIMEOUT', JSON.stringify(full));
            assert.match(JSON.stringify(full.content), /did not complete the MCP handshake within 10000 ms/);
            // Starting again, it would be waited for up to its connect limit (10 s) again: the bare name is answered
            // by openWaitMs instead, while that start is still under way.
            const bare = await use(wb.client, 'mixed', 'gen_0000');
            assert.deepEqual([errorOf(bare).code, errorOf(bare).retryable, errorOf(bare).server], ['CONNECT_TIMEOUT', true, 'stuck'], JSON.stringify(bare));
            const text = JSON.stringify(bare.content);
            assert.match(text, /server \\"stuck\\" of toolbox \\"mixed\\" is starting again/, text);
            assert.match(text, /openWaitMs, not useToolWaitMs/, text);
          } finally {
            await wb.close();
          }
        } finally {
          await temp.cleanup();
        }
      });
    });
  }
}
