import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { logLines } from '../helpers/log-lines.js';
import { fixtureServer, textOf, waitFor } from '../helpers/workbench-process.js';

// README "Enabled and disabled tools": deleting the state file means the defaults. A file that goes away while the
// workbench runs (a dotfiles sync, `git clean`) re-enables what it disabled, so that is never silent: one warning names
// the file and each pattern that is enabled again, and says how to disable them again.

const combos: [Over, EraName][] = [['stdio', 'legacy'], ['http', 'modern']];
describe('the state file deleted while the workbench runs', () => {
  for (const [over, era] of combos) {
    it(`warns once, naming what it disabled; the healthy server answers throughout (${over}, ${era} client)`, async () => {
      const config = { toolboxes: { tb: { mcpServers: { fx: fixtureServer(), ok: fixtureServer('--name', 'ok') } } } };
      const wb = await startEra(over, era, config, undefined, {}, { args: ['--log-format', 'json'] });
      try {
        const statePath = join(wb.dir, 'tool-state.json');
        const use = async (tool: string): Promise<CallToolResult> =>
          (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: { text: 'x' } } })) as CallToolResult;
        await writeFile(statePath, JSON.stringify({ enabled: [], disabled: ['tb__fx__echo', 'tb__fx__dotted*'] }));
        await waitFor(async () => (await use('tb__fx__echo')).isError === true, { timeoutMs: 15_000, what: 'the state file to disable echo' });
        assert.equal(textOf(await use('tb__ok__echo')), 'x');
        await rm(statePath);
        await waitFor(async () => (await use('tb__fx__echo')).isError !== true, { timeoutMs: 15_000, what: 'the defaults after the deletion' });
        assert.equal(textOf(await use('tb__ok__echo')), 'x');
        const warned = logLines(wb.stderr()).filter((l) => l.level === 'warn' && l.message.includes(statePath));
        assert.equal(warned.length, 1, wb.stderr());
        assert.match(warned[0]!.message, /was deleted/);
        assert.ok(warned[0]!.message.includes('tb__fx__echo') && warned[0]!.message.includes('tb__fx__dotted*'), warned[0]!.message);
        assert.ok(warned[0]!.message.includes('mcp-workbench tools disable'), warned[0]!.message);
      } finally {
        await wb.close();
      }
    });
  }
});
