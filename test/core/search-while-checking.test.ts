import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { fixtureServer, tempDir, textOf } from '../helpers/workbench-process.js';

// README "Catalog cache": a server shown from its last known list is `checking` while it is being connected to check
// it, and `unchecked` only when nothing started it (a search starts none). A search made while the check that opening
// the toolbox started is still under way used to call it `unchecked`.

describe('a search while a cached server is being checked', () => {
  for (const era of ERAS) {
    it(`labels it "checking" (${era} client)`, async () => {
      const { dir, cleanup } = await tempDir('wb-search-checking-');
      const cacheDir = join(dir, 'cache');
      const hang = join(dir, 'hang');
      // Connects normally until the file `hang` exists; from then on it never answers initialize (a check in flight).
      const config = { toolboxes: { dev: { mcpServers: { slow: fixtureServer('--never-initialize-if', hang) } } } };
      const call = async (client: Awaited<ReturnType<typeof startEra>>['client'], args: Record<string, unknown>): Promise<{ server: string; state: string }[]> => {
        const result = (await client.callTool({ name: 'open_toolbox', arguments: args })) as CallToolResult;
        assert.notEqual(result.isError, true, textOf(result));
        return (result.structuredContent as { servers_cached?: { server: string; state: string }[] }).servers_cached ?? [];
      };
      try {
        const first = await startEra('stdio', era, config, undefined, {}, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
        try {
          assert.deepEqual(await call(first.client, { toolbox_name: 'dev' }), [], 'connected live, and cached');
        } finally {
          await first.close();
        }
        await writeFile(hang, '');
        const second = await startEra('stdio', era, config, undefined, {}, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
        try {
          assert.deepEqual((await call(second.client, { toolbox_name: 'dev', query: 'echo' })).map((c) => c.state), ['unchecked'], 'a search starts nothing');
          assert.deepEqual((await call(second.client, { toolbox_name: 'dev' })).map((c) => c.state), ['checking'], 'opening the toolbox checks it');
          assert.deepEqual((await call(second.client, { toolbox_name: 'dev', query: 'echo' })).map((c) => c.state), ['checking'], 'still being checked');
        } finally {
          await second.close();
        }
      } finally {
        await cleanup();
      }
    });
  }
});
