import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { tokenClient, type EraName } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, textOf, waitFor } from '../helpers/workbench-process.js';

// README "Pinned tool definitions" and "Files of each user": each user's first sight of a `${user:…}` server is
// recorded as approved, in the one pins file. When many users list their servers at once, their first sights are
// written by one writer of the workbench (in one locked update when they come together) — the workbench used to
// write each in its own update, all waiting for the file's lock against each other, so on a busy machine some timed
// out ("could not record the tool definitions") and one could even break, as stale, the lock its own process held.

const USERS = 24;
const tokens = Array.from({ length: USERS }, (_, i) => `user-${String(i).padStart(2, '0')}-0123456789abcdef0123456789abcdef`);

describe('first sights of many users at once (--http)', () => {
  test('every user is recorded, and the workbench never waits for its own lock', async () => {
    // A realistic catalog makes each recorded entry (and so each rewrite of the file) sizeable.
    const config = { toolboxes: { lab: { mcpServers: { own: { ...fixtureServer('--catalog', '300', '--name', 'own-${user:id}'), timeoutMs: 120_000 } } } } };
    const wb = await startHttpWorkbench(config, ['--http', '0', '--max-sessions', String(USERS * 2)], { WORKBENCH_TOKEN: tokens.join(',') });
    try {
      const clients = await Promise.all(tokens.map((token, i) => tokenClient(wb.url, token, (i % 2 === 0 ? 'legacy' : 'modern') as EraName)));
      const answers = await Promise.all(
        clients.map(async (c) => {
          const params = { name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'lab__own__echo', arguments: { text: 'hi' } } };
          return (await c.callTool(params, { timeout: 180_000 })) as CallToolResult;
        }),
      );
      for (const answer of answers) assert.notEqual(answer.isError, true, textOf(answer));
      const keys = async (): Promise<string[]> => {
        const text = await readFile(join(wb.dir, 'tool-pins.json'), 'utf8').catch(() => '{"servers":{}}');
        return Object.keys((JSON.parse(text) as { servers: Record<string, unknown> }).servers);
      };
      const recorded = await waitFor(async () => (await keys()).length === USERS || /could not record/.test(wb.stderr()), 120_000);
      assert.ok(recorded, `recorded: ${(await keys()).length} of ${USERS}`);
      assert.doesNotMatch(wb.stderr(), /could not record the tool definitions|stale lock|taken over by another process/);
      assert.equal((await keys()).length, USERS, wb.stderr().slice(-3000));
      await Promise.allSettled(clients.map((c) => c.close()));
    } finally {
      await wb.stop();
    }
  });
});
