import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { node, startWorkbench, tempDir, textOf } from '../helpers/workbench-process.js';

// A modern server's tool list carries caching hints (ttlMs, cacheScope). The workbench honours ttlMs: past it, the
// list is read again before open_toolbox shows it, and the catalog cache does not answer with it (README "Protocol
// eras"). The server here adds a tool without telling anyone (--quiet-grow): only an expired list shows it.

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
      // On disk: the list with when it stops being a fair answer.
      const files = (await readdir(join(dir, 'cache'))).filter((f) => f.endsWith('.json'));
      assert.equal(files.length, 1);
      const entry = JSON.parse(await readFile(join(dir, 'cache', files[0]!), 'utf8')) as { tools?: unknown[]; toolsExpireAt?: string };
      assert.ok(Array.isArray(entry.tools));
      assert.equal(typeof entry.toolsExpireAt, 'string');
      assert.equal(Date.parse(entry.toolsExpireAt!) <= Date.now(), expired);
      await cleanup();
    });
  }

  it('an expired list on disk is not served as the first answer of a new workbench', async () => {
    const { dir, cleanup } = await tempDir();
    const env = { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
    // The extra tool's name is an env value, which the cache key leaves out: the same server to the cache, but a
    // different list live, so the first answer shows where it came from.
    const withExtra = (ttlMs: number, extra: string): unknown => {
      const cfg = config(ttlMs) as { toolboxes: { mx: { mcpServers: { new: Record<string, unknown> } } } };
      cfg.toolboxes.mx.mcpServers.new.env = { MODERN_FIXTURE_EXTRA_TOOL: extra };
      return cfg;
    };
    try {
      for (const [ttlMs, fromCache] of [
        [600_000, true],
        [0, false],
      ] as const) {
        const first = await startWorkbench(withExtra(ttlMs, `before_${ttlMs}`), { env });
        assert.ok((await toolNames(first.call)).includes(`before_${ttlMs}`));
        await first.close();
        const second = await startWorkbench(withExtra(ttlMs, `after_${ttlMs}`), { env });
        try {
          const names = await toolNames(second.call);
          assert.equal(names.includes(`before_${ttlMs}`), fromCache, `ttlMs ${ttlMs}: ${names.join(', ')}`);
          assert.equal(names.includes(`after_${ttlMs}`), !fromCache, `ttlMs ${ttlMs}: ${names.join(', ')}`);
        } finally {
          await second.close();
        }
      }
    } finally {
      await cleanup();
    }
  });
});
