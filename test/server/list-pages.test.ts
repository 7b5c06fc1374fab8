import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { fixtureServer } from '../helpers/workbench-process.js';

/**
 * resources/list (and the other aggregated lists) come in pages of 500 items with nextCursor (README "Resources,
 * prompts and completions"): thousands of resources across servers never make one message a client cannot take.
 */
for (const [over, era] of [['stdio', 'legacy'], ['http', 'modern']] as [Over, EraName][]) {
  describe(`aggregated lists in pages (${over}, ${era} client)`, () => {
    it('700 resources: a page of 500 with nextCursor, then the rest; a made-up cursor is invalid params', async () => {
      const wb = await startEra(over, era, { toolboxes: { lab: { mcpServers: { a: fixtureServer('--extra-resources', '700', '--name', 'a') } } } });
      try {
        await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } });
        // The SDK client walks the pages itself when given no cursor: every resource, once.
        const all = await wb.client.listResources();
        assert.equal(new Set(all.resources.map((r) => r.uri)).size, 702);
        assert.equal(all.resources.length, 702);
        // Page by page (an explicit cursor asks for one page): 500, then the rest.
        const first = await wb.client.request({ method: 'resources/list', params: {} });
        assert.equal((first.resources as unknown[]).length, 500);
        assert.equal(first.nextCursor, 'resources:500');
        const second = await wb.client.listResources({ cursor: first.nextCursor as string });
        assert.equal(second.resources.length, 202);
        assert.equal(second.nextCursor, undefined);
        // Only a cursor the workbench gave, for this list: not a made-up offset, not another list's.
        for (const cursor of ['bogus', 'p500', 'resources:7', 'resources:0', 'prompts:500']) {
          await assert.rejects(wb.client.listResources({ cursor }), (error: Error & { code?: number }) => error.code === -32602 && /Invalid cursor/.test(error.message), cursor);
        }
        await assert.rejects(wb.client.listPrompts({ cursor: 'resources:500' }), (error: Error & { code?: number }) => error.code === -32602);
        // A short list is one page, as before.
        assert.equal((await wb.client.listResourceTemplates()).nextCursor, undefined);
      } finally {
        await wb.close();
      }
    });
  });
}
