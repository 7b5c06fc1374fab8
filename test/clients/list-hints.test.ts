import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { node, startWorkbench, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// A modern server's tool list carries caching hints (ttlMs, cacheScope). A live connection honours ttlMs: past it,
// the list is read again before open_toolbox shows it. The catalog cache keeps every list as the last known index
// (README "Catalog cache"): a positive ttlMs makes it fresh (shown, nothing started), anything else — SDK v2's default
// `ttlMs: 0, cacheScope: "private"` included — is shown at once, labelled with its age, and checked in the
// background. The server here adds a tool without telling anyone (--quiet-grow): only an expired list shows it.

const modernFixture = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));

function config(ttlMs: number): unknown {
  return { toolboxes: { mx: { mcpServers: { new: { command: node, args: [modernFixture, '--quiet-grow', '--ttl-ms', String(ttlMs)] } } } } };
}

async function toolNames(call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>): Promise<string[]> {
  const opened = await call('open_toolbox', { toolbox_name: 'mx', detail: 'full' });
  return ((opened.structuredContent as { tools?: { original_name: string }[] }).tools ?? []).map((t) => t.original_name);
}

describe("a modern server's ttlMs", () => {
  for (const [ttlMs, expired] of [
    [0, true],
    [600_000, false],
  ] as const) {
    it(`${expired ? 'past' : 'within'} it (ttlMs ${ttlMs}), open_toolbox ${expired ? 'reads the list again' : 'keeps the list it has'}`, async () => {
      const { dir, cleanup } = await tempDir();
      const wb = await startWorkbench(config(ttlMs), { env: { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') } });
      try {
        assert.ok(!(await toolNames(wb.call)).includes('grown_6'));
        assert.equal(textOf(await wb.useTool('mx', 'mx__new__grow')), 'added grown_6');
        assert.equal((await toolNames(wb.call)).includes('grown_6'), expired);
      } finally {
        await wb.close();
      }
      // On disk: the list, fresh until its ttlMs has passed (no freshness at all for ttlMs 0).
      const lists = await listFiles(join(dir, 'cache'));
      assert.equal(lists.length, 1);
      const entry = lists[0]!;
      assert.ok(Array.isArray(entry.tools));
      assert.equal(entry.freshUntil === undefined, expired);
      if (!expired) assert.ok(Date.parse(entry.freshUntil!) > Date.now());
      await cleanup();
    });
  }

  for (const hints of [[], ['--private']]) {
    it(`a list on disk is the first answer of a new workbench: fresh within ttlMs, else labelled and checked (${hints.join(' ') || 'public'})`, async () => {
      const { dir, cleanup } = await tempDir();
      const env = { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
      // The extra tool's name is an env value that is no credential, which the cache key leaves out: the same server
      // to the cache, but a different list live, so each answer shows where it came from.
      const withExtra = (ttlMs: number, extra: string): unknown => {
        const cfg = config(ttlMs) as { toolboxes: { mx: { mcpServers: { new: { args: string[]; env?: Record<string, string> } } } } };
        cfg.toolboxes.mx.mcpServers.new.env = { MODERN_FIXTURE_EXTRA_TOOL: extra };
        cfg.toolboxes.mx.mcpServers.new.args.push(...hints);
        return cfg;
      };
      try {
        for (const ttlMs of [600_000, 0]) {
          const first = await startWorkbench(withExtra(ttlMs, `before_${ttlMs}`), { env });
          assert.ok((await toolNames(first.call)).includes(`before_${ttlMs}`));
          await first.close();
          const second = await startWorkbench(withExtra(ttlMs, `after_${ttlMs}`), { env });
          try {
            const opened = await openFull(second.call);
            const names = opened.tools.map((t) => t.original_name);
            assert.ok(names.includes(`before_${ttlMs}`), `the last known list answers first (ttlMs ${ttlMs}): ${names.join(', ')}`);
            assert.deepEqual(opened.servers_cached.map((c) => c.server), ['new']);
            if (ttlMs > 0) {
              assert.equal(opened.servers_cached[0]!.state, 'fresh');
              assert.match(opened.servers_cached_note, /fresh: still fresh by the server's own hint/);
              continue;
            }
            // Checked in the background: the next answer is live and says what changed since the first.
            let next = opened;
            const changes = [...opened.catalog_changes];
            const live = async (): Promise<boolean> => {
              next = await openFull(second.call);
              changes.push(...next.catalog_changes);
              return next.servers_cached.length === 0;
            };
            assert.ok(await waitFor(live, 15_000), 'revalidated');
            assert.ok(next.tools.some((t) => t.original_name === `after_${ttlMs}`));
            const change = changes.find((c) => c.server === 'new');
            assert.ok(change, `catalog_changes names the server: ${JSON.stringify(next)}`.slice(0, 500));
            assert.ok(change.added.includes(`after_${ttlMs}`) && change.removed.includes(`before_${ttlMs}`));
          } finally {
            await second.close();
          }
        }
      } finally {
        await cleanup();
      }
    });
  }
});

interface Opened {
  tools: { original_name: string }[];
  servers_cached: { server: string; state: string; age: string }[];
  servers_cached_note: string;
  catalog_changes: { server: string; added: string[]; removed: string[] }[];
}

async function openFull(call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>): Promise<Opened> {
  const opened = await call('open_toolbox', { toolbox_name: 'mx', detail: 'full' });
  const body = (opened.structuredContent ?? {}) as Record<string, unknown>;
  return {
    tools: (body.tools as Opened['tools'] | undefined) ?? [],
    servers_cached: (body.servers_cached as Opened['servers_cached'] | undefined) ?? [],
    servers_cached_note: typeof body.servers_cached_note === 'string' ? body.servers_cached_note : '',
    catalog_changes: (body.catalog_changes as Opened['catalog_changes'] | undefined) ?? [],
  };
}

async function listFiles(dir: string): Promise<{ tools?: unknown[]; freshUntil?: string }[]> {
  const found: { kind?: string; tools?: unknown[]; freshUntil?: string }[] = [];
  for (const f of (await readdir(dir)).filter((name) => name.endsWith('.json'))) found.push(JSON.parse(await readFile(join(dir, f), 'utf8')));
  return found.filter((entry) => entry.kind === 'tools');
}
