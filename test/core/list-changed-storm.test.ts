import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { fixtureEvents, fixtureServer, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// README "Downstream servers" (Relayed features): a server's tools/list_changed refreshes its catalog. A server that
// sends hundreds of them a second must not make the workbench list it hundreds of times, flood the client with
// list changes of its own, or hold up calls — to it or to the healthy server beside it.

const STORM = 1500;
/** Far fewer than the notifications sent: changes that come together are read as one. */
const MOST_LISTINGS = 50;

const combos: [Over, EraName][] = [['stdio', 'legacy'], ['stdio', 'modern'], ['http', 'modern']];

for (const [over, era] of combos) {
  describe(`a storm of tools/list_changed (${over}, ${era} client)`, () => {
    it('calls keep answering, the listings are coalesced, and the client is not flooded', { timeout: 180_000 }, async () => {
      const { dir, cleanup } = await tempDir('wb-storm-');
      const logFile = join(dir, 'storm.log');
      const config = { toolboxes: { tb: { mcpServers: { good: fixtureServer('--name', 'good'), storm: fixtureServer('--name', 'storm', '--storm', '--log', logFile) } } } };
      let toldClient = 0;
      const wb = await startEra(over, era, config, (client) => client.setNotificationHandler('notifications/tools/list_changed', () => void toldClient++));
      try {
        const use = async (tool: string, args: Record<string, unknown>): Promise<CallToolResult> =>
          (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: args } })) as CallToolResult;
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'tb' } })) as CallToolResult;
        assert.notEqual(opened.isError, true, textOf(opened));
        const listsBefore = (await fixtureEvents(logFile)).filter((e) => e.event === 'list').length;
        const toldBefore = toldClient;
        assert.equal(textOf(await use('tb__storm__storm', { count: STORM, every_ms: 2 })), 'storming');
        const done = async (): Promise<boolean> => (await fixtureEvents(logFile)).some((e) => e.event === 'storm_done');
        let calls = 0;
        do {
          assert.equal(textOf(await use('tb__good__echo', { text: `good ${calls}` })), `good ${calls}`);
          assert.equal(textOf(await use('tb__storm__echo', { text: `storm ${calls}` })), `storm ${calls}`);
          calls++;
        } while (!(await done()));
        // The last change is read once the storm is over.
        await waitFor(async () => (await fixtureEvents(logFile)).filter((e) => e.event === 'list').length > listsBefore, { timeoutMs: 30_000, what: 'the list to be read again' });
        assert.equal(textOf(await use('tb__storm__echo', { text: 'after' })), 'after');
        const listings = (await fixtureEvents(logFile)).filter((e) => e.event === 'list').length - listsBefore;
        assert.ok(listings <= MOST_LISTINGS, `${listings} listings for ${STORM} notifications`);
        assert.ok(toldClient - toldBefore <= MOST_LISTINGS, `${toldClient - toldBefore} list changes told the client`);
      } finally {
        await wb.close();
        await cleanup();
      }
    });
  });
}

// A storm that never ends must not postpone the re-read forever (README "Downstream servers"): changes that come
// together are read as one, but the list is still read again every few seconds while they keep coming.
for (const [over, era] of combos) {
  describe(`an endless storm of tools/list_changed (${over}, ${era} client)`, () => {
    it('a tool the server adds mid-storm still becomes callable', { timeout: 180_000 }, async () => {
      const config = { toolboxes: { tb: { mcpServers: { storm: fixtureServer('--name', 'storm', '--storm', '--list-changed') } } } };
      const wb = await startEra(over, era, config);
      try {
        const use = async (tool: string, args: Record<string, unknown>): Promise<CallToolResult> =>
          (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: args } })) as CallToolResult;
        // Far more notifications than the test lasts: the storm is still going when the workbench closes it.
        assert.equal(textOf(await use('tb__storm__storm', { count: 100_000_000, every_ms: 5 })), 'storming');
        assert.equal(textOf(await use('tb__storm__add_tool', { name: 'fresh' })), 'added fresh');
        let last = '';
        const seen = async (): Promise<boolean> => {
          const result = await use('tb__storm__fresh', {});
          last = textOf(result);
          return result.isError !== true && last === 'fresh';
        };
        assert.ok(await waitFor(seen, 90_000), `the added tool never became callable: ${last}`);
        assert.equal(textOf(await use('tb__storm__echo', { text: 'still' })), 'still');
      } finally {
        await wb.close();
      }
    });
  });
}
