import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * Every list in an open_toolbox answer's head shares the head's quarter of the context budget (README "open_toolbox:
 * context budget, detail on demand, search"): sixteen servers shown from the catalog cache, or the catalog changes of
 * fifteen removed servers, never take an answer over its budget, and what is counted away says how many and where to
 * see it.
 */
const BUDGET = 2000;
const SERVERS = 16;
const COMBOS = [['stdio', 'legacy'], ['http', 'modern']] as [Over, EraName][];

function servers(prefix: string, count: number): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, fixtureServer('--name', `${prefix}${i}`)]));
}

interface Head {
  servers_connected: string[];
  servers_cached?: { server: string; listed: string; age: string; state: string; note?: string }[];
  servers_pending?: unknown[];
  catalog_changes?: { toolbox: string; server: string; added: string[]; removed: string[]; changed: string[]; note?: string }[];
}

const counted = (name: string): number | undefined => {
  const match = /^\((\d+) more\)$/.exec(name);
  return match ? Number(match[1]) : undefined;
};

async function open(client: { callTool: (p: { name: string; arguments: Record<string, unknown> }) => Promise<unknown> }, args: Record<string, unknown>): Promise<{ head: Head; text: string }> {
  const result = (await client.callTool({ name: 'open_toolbox', arguments: args })) as CallToolResult;
  return { head: result.structuredContent as unknown as Head, text: (result.content[0] as { text: string }).text };
}

for (const [over, era] of COMBOS) {
  describe(`servers_cached is bounded with the rest of the head (${over}, ${era} client)`, () => {
    it(`${SERVERS} servers shown from the cache: within the budget, the rest counted, all named in full`, { timeout: 300_000 }, async () => {
      const temp = await tempDir('wb-cached-head-');
      const cache = join(temp.dir, 'cache');
      const config = { catalogBudget: BUDGET, openWaitMs: 45_000, toolboxes: { dev: { mcpServers: servers('s', SERVERS) } } };
      try {
        // A first run lists every server, which fills the cache.
        const first = await startEra(over, era, config, undefined, undefined, { env: { MCP_WORKBENCH_CACHE_DIR: cache } });
        try {
          const connected = async (): Promise<boolean> => (await open(first.client, { toolbox_name: 'dev' })).head.servers_connected.length === SERVERS;
          assert.ok(await waitFor(connected, 120_000), 'every server connected');
          const written = async (): Promise<boolean> => (await readdir(cache).catch(() => [])).filter((f) => f.endsWith('.json')).length >= SERVERS;
          assert.ok(await waitFor(written, 60_000), 'every list cached');
        } finally {
          await first.close();
        }
        const wb = await startEra(over, era, config, undefined, undefined, { env: { MCP_WORKBENCH_CACHE_DIR: cache } });
        try {
          // A search across every toolbox starts no cached server; opening the toolbox shows them while they connect.
          for (const args of [{ query: 'echo' }, { toolbox_name: 'dev' }]) {
            const { head, text } = await open(wb.client, args);
            assert.ok(text.length <= BUDGET, `${JSON.stringify(args)}: ${text.length} characters`);
            const cached = head.servers_cached ?? [];
            const rest = cached.find((c) => counted(c.server) !== undefined);
            assert.ok(rest, `${JSON.stringify(args)}: ${JSON.stringify(cached.map((c) => c.server))}`);
            assert.equal(counted(rest.server), SERVERS - (cached.length - 1), 'the counted entry counts every server left out');
            assert.match(rest.note ?? '', /^\d+ more servers shown from their last known lists \((checking|unchecked) ×\d+.*open_toolbox with detail:"full" names each/);
          }
          // Asked in full, every cached server is named (the search starts none of them).
          const { head } = await open(wb.client, { query: 'echo', detail: 'full' });
          assert.deepEqual((head.servers_cached ?? []).map((c) => c.server).sort(), Object.keys(servers('s', SERVERS)).map((s) => `dev/${s}`).sort());
        } finally {
          await wb.close();
        }
      } finally {
        await temp.cleanup();
      }
    });
  });
}

for (const [over, era] of COMBOS) {
  describe(`catalog_changes is bounded with the rest of the head (${over}, ${era} client)`, () => {
    it(`the tools of ${SERVERS - 1} removed servers: each answer within the budget, every change told, none twice`, { timeout: 300_000 }, async () => {
      const gone = servers('m', SERVERS - 1);
      const config = { catalogBudget: BUDGET, openWaitMs: 45_000, toolboxes: { keep: { mcpServers: { fx: fixtureServer() } }, many: { mcpServers: gone } } };
      const wb = await startEra(over, era, config);
      try {
        const connected = async (): Promise<boolean> => (await open(wb.client, { toolbox_name: 'many' })).head.servers_connected.length === SERVERS - 1;
        assert.ok(await waitFor(connected, 120_000), 'every server connected and shown');
        await writeFile(wb.configPath, JSON.stringify({ catalogBudget: BUDGET, toolboxes: { keep: config.toolboxes.keep } }));
        const told = new Map<string, number>();
        let counts = 0;
        // Each answer tells what fits, counts the rest, and the next answer tells those (a search across toolboxes too).
        const all = async (): Promise<boolean> => {
          for (const args of [{ toolbox_name: 'keep' }, { query: 'echo' }]) {
            const { head, text } = await open(wb.client, args);
            assert.ok(text.length <= BUDGET, `${JSON.stringify(args)}: ${text.length} characters`);
            const changes = head.catalog_changes ?? [];
            for (const c of changes.filter((c) => counted(c.server) === undefined)) told.set(c.server, (told.get(c.server) ?? 0) + 1);
            const rest = changes.find((c) => counted(c.server) !== undefined);
            if (rest) {
              counts++;
              assert.match(rest.note ?? '', /^the tools of \d+ more servers changed .*the next open_toolbox answer tells them, open_toolbox with detail:"full" all at once/);
            }
          }
          return told.size === SERVERS - 1;
        };
        assert.ok(await waitFor(all, 60_000), `every removal told: ${JSON.stringify([...told.keys()])}\n${wb.stderr().slice(-2000)}`);
        assert.ok(counts > 0, 'some answers counted changes away');
        assert.deepEqual([...told.keys()].sort(), Object.keys(gone).sort());
        assert.ok([...told.values()].every((n) => n === 1), `told once each: ${JSON.stringify([...told])}`);
      } finally {
        await wb.close();
      }
    });
  });
}
