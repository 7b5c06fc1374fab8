import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { fixtureServer, node, startWorkbench, structuredAnswer, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

/**
 * `catalog_changes` (README "Catalog cache") tells a session what changed in a server's tools since it was shown them,
 * and names only tools the session may see: a tool the user disabled is not announced as added, changed or removed.
 */

const modernFixture = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const server = { command: node, args: [modernFixture] };

interface Opened {
  tools: { original_name: string }[];
  catalog_changes?: { toolbox: string; server: string; added: string[]; removed: string[]; changed: string[] }[];
}

describe('catalog_changes names only tools the session may see', () => {
  it('a tool added under a disabled pattern is not announced; the same tool where nothing disables it is', async () => {
    const config = { toolboxes: { open: { mcpServers: { fx: server } }, shut: { disabledTools: ['grown_*'], mcpServers: { fx: server } } } };
    const wb = await startWorkbench(config, { args: ['--management-tools'] });
    try {
      // Every answer's notices, whichever toolbox it was about (a session hears of any change in its next answer).
      const changes: NonNullable<Opened['catalog_changes']> = [];
      const open = async (toolbox: 'open' | 'shut'): Promise<Opened> => {
        const opened = structuredAnswer<Opened>(await wb.call('open_toolbox', { toolbox_name: toolbox, detail: 'full' }), 'tools');
        changes.push(...(opened.catalog_changes ?? []));
        return opened;
      };
      for (const toolbox of ['open', 'shut'] as const) {
        await open(toolbox);
        assert.match(textOf(await wb.useTool(toolbox, `${toolbox}__fx__grow`)), /added grown_\d+/);
      }
      // The list_changed notice makes the workbench read the list again; the next answer carries the change.
      assert.ok(await waitFor(async () => (await open('open')).tools.some((t) => t.original_name.startsWith('grown_')), 10_000), 'the grown tool is listed');
      assert.ok(changes.some((c) => c.toolbox === 'open' && c.added.some((name) => name.startsWith('grown_'))), `announced where it is enabled: ${JSON.stringify(changes)}`);
      // The disabled toolbox's server grew the same way: once the workbench has its new list (list_all_tools shows the
      // tool as disabled), nothing of it may be named.
      const known = async (): Promise<boolean> => textOf(await wb.call('list_all_tools', { toolbox: 'shut' })).includes('shut__fx__grown_');
      assert.ok(await waitFor(known, 10_000), 'the workbench read the grown list');
      assert.ok(!(await open('shut')).tools.some((t) => t.original_name.startsWith('grown_')), 'not listed');
      assert.ok(!JSON.stringify(changes.filter((c) => c.toolbox === 'shut')).includes('grown_'), `not announced: ${JSON.stringify(changes)}`);
    } finally {
      await wb.close();
    }
  });
});

for (const [over, era] of (['stdio', 'http'] as const).flatMap((o) => ERAS.map((e) => [o, e] as const))) {
  describe(`catalog_changes names the tools of servers a config edit removed (${over}, ${era})`, () => {
    it('a removed server and a removed toolbox: their shown tools are named as removed, once, and no disabled one', async () => {
      const fx = fixtureServer();
      const before = {
        toolboxes: {
          keep: { mcpServers: { fx } },
          two: { mcpServers: { a: fx, b: fixtureServer('--name', 'b') } },
          gone: { disabledTools: ['add'], mcpServers: { fx } },
        },
      };
      const wb = await startEra(over, era, before);
      try {
        const open = async (toolbox: string): Promise<CallToolResult> =>
          (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: toolbox, detail: 'full' } })) as CallToolResult;
        const shownOf = async (toolbox: string, server: string): Promise<string[]> =>
          structuredAnswer<{ tools: { original_name: string; source_server: string }[] }>(await open(toolbox), 'tools').tools.filter((t) => t.source_server === server).map((t) => t.original_name).sort();
        const shownB = await shownOf('two', 'b');
        const shownGone = await shownOf('gone', 'fx');
        assert.ok(shownB.includes('echo') && !shownGone.includes('add'), `${shownB} / ${shownGone}`);
        await open('keep');

        await writeFile(wb.configPath, JSON.stringify({ toolboxes: { keep: before.toolboxes.keep, two: { mcpServers: { a: fx } } } }));
        const changes: NonNullable<Opened['catalog_changes']> = [];
        const told = async (): Promise<boolean> => {
          changes.push(...(structuredAnswer<Opened>(await open('keep'), 'tools').catalog_changes ?? []));
          return workbenchErrorCode(await open('gone')) === 'TOOLBOX_NOT_FOUND' && changes.length >= 2;
        };
        assert.ok(await waitFor(told, 15_000), `the edit applied and both removals were told: ${JSON.stringify(changes)}\n${wb.stderr()}`);
        const byServer = new Map(changes.map((c) => [`${c.toolbox}/${c.server}`, { ...c, removed: [...c.removed].sort() }]));
        assert.deepEqual(byServer.get('two/b'), { toolbox: 'two', server: 'b', added: [], removed: shownB, changed: [] });
        assert.deepEqual(byServer.get('gone/fx'), { toolbox: 'gone', server: 'fx', added: [], removed: shownGone, changed: [] });
        assert.equal(changes.length, 2, `told once each, nothing else: ${JSON.stringify(changes)}`);
        assert.equal(structuredAnswer<Opened>(await open('keep'), 'tools').catalog_changes, undefined, 'not told again');
      } finally {
        await wb.close();
      }
    });
  });
}
