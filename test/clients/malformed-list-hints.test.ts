import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, tokenClient, type Over } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { node, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// README "Catalog cache", "Why this reading of the caching hints is safe": a modern server's list whose caching hints
// are malformed (a negative, fractional, too large or non-number ttlMs, an unknown cacheScope) or missing is still
// used: a bad ttlMs counts as 0 (revalidated, never fresh on disk), a missing or unknown cacheScope as "private" (never
// shared across users), and each fault is said once. Such a server used to fail to start at all — "the connection
// closed (nothing on stderr)" — since the SDK refuses the whole list.

const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const VARIANTS: Record<string, unknown>[] = [
  { ttlMs: -5, cacheScope: 'team' },
  { ttlMs: 'omit', cacheScope: 'omit' },
  { ttlMs: 1e308 },
  { ttlMs: '60000', cacheScope: 'public' },
];

async function listFiles(dir: string): Promise<{ kind?: string; freshUntil?: string }[]> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));
  return (await Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as { kind?: string }))).filter((e) => e.kind === 'tools');
}

const names = async (client: Client): Promise<string[]> => {
  const opened = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mx' } })) as CallToolResult;
  return ((opened.structuredContent as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name);
};

describe('a modern server whose list hints are malformed or missing', () => {
  for (const over of ['stdio', 'http'] as Over[]) {
    for (const era of ERAS) {
      it(`is used, revalidated, and said once (${era} client over ${over})`, async () => {
        for (const hints of VARIANTS) {
          const { dir, cleanup } = await tempDir('wb-bad-hints-');
          const cacheDir = join(dir, 'cache');
          const server = { command: node, args: [modern, '--quiet-grow'], env: { MODERN_FIXTURE_LIST_HINTS: JSON.stringify(hints) } };
          const wb = await startEra(over, era, { toolboxes: { mx: { mcpServers: { s: server } } } }, undefined, {}, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
          try {
            assert.ok((await names(wb.client)).includes('mx__s__echo'), `${JSON.stringify(hints)}: ${wb.stderr().slice(-800)}`);
            const call = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'mx', tool_name: 'mx__s__grow' } })) as CallToolResult;
            assert.match(textOf(call), /added grown_6/);
            // ttlMs taken as 0: the next look lists again and sees the tool added without a list_changed.
            assert.ok((await names(wb.client)).includes('mx__s__grown_6'), `revalidated (${JSON.stringify(hints)})`);
            assert.ok(await waitFor(async () => (await listFiles(cacheDir)).length === 1, 10_000), 'the list is cached');
            assert.equal((await listFiles(cacheDir))[0]!.freshUntil, undefined, 'never fresh on disk');
            const said = wb.stderr().split('\n').filter((line) => line.includes('malformed caching hint'));
            // The fixture sends cacheScope "public" unless told otherwise: one line per hint given that is not that.
            const expected = Object.entries(hints).filter(([key, value]) => key === 'ttlMs' || value !== 'public').length;
            assert.equal(said.length, expected, said.join('\n'));
          } finally {
            await wb.close();
            await cleanup();
          }
        }
      });
    }
  }

  for (const era of ERAS) {
    it(`with an unknown or missing cacheScope, is never shared across users when "shared" (${era} clients over HTTP)`, async () => {
      for (const hints of [{ cacheScope: 'team' }, { cacheScope: 'omit' }]) {
        const { dir, cleanup } = await tempDir('wb-bad-scope-');
        const tokens = ['token-of-alice-0123456789', 'token-of-bob-0123456789ab'];
        const server = { command: node, args: [modern, '--ttl-ms', '0'], shared: true, env: { MODERN_FIXTURE_LIST_HINTS: JSON.stringify(hints) } };
        const wb = await startHttpWorkbench({ toolboxes: { mx: { mcpServers: { s: server } } } }, ['--http', '0'], {
          WORKBENCH_TOKEN: tokens.join(','),
          MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache'),
        });
        const open: Client[] = [];
        try {
          const alice = await tokenClient(wb.url, tokens[0]!, era);
          open.push(alice);
          assert.ok((await names(alice)).includes('mx__s__grow'), wb.stderr().slice(-800));
          await alice.callTool({ name: 'use_tool', arguments: { toolbox_name: 'mx', tool_name: 'mx__s__grow' } });
          assert.ok(await waitFor(async () => (await names(alice)).includes('mx__s__grown_6'), 10_000), 'the user who added it sees it');
          const bob = await tokenClient(wb.url, tokens[1]!, era);
          open.push(bob);
          const seen = await names(bob);
          assert.ok(seen.includes('mx__s__grow') && !seen.includes('mx__s__grown_6'), `${JSON.stringify(hints)}: ${seen.join(', ')}`);
        } finally {
          await Promise.allSettled(open.map((c) => c.close()));
          await wb.stop();
          await cleanup();
        }
      }
    });
  }
});
