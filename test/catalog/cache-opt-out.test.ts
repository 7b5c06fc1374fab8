import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { fixtureServer, node, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// README "Catalog cache": `"catalogCache": false` on a server neither reads nor writes the cache for that server — its
// protocol era (the `server/discover` answer) included, which used to be written all the same.

const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));

/** `kind:server` of every file in the cache directory. */
async function cached(dir: string): Promise<string[]> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const parsed = await Promise.all(files.filter((f) => f.endsWith('.json')).map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as { kind: string; server: string }));
  return parsed.map((f) => `${f.kind}:${f.server}`).sort();
}

describe('"catalogCache": false on a server', () => {
  for (const era of ERAS) {
    it(`writes no file of that server, not even its era, while its neighbour's are written (${era} client)`, async () => {
      const { dir, cleanup } = await tempDir('wb-cache-opt-out-');
      const cacheDir = join(dir, 'cache');
      const config = {
        toolboxes: {
          dev: {
            mcpServers: {
              off: { command: node, args: [modern, '--private', '--ttl-ms', '0'], catalogCache: false },
              on: fixtureServer(),
            },
          },
        },
      };
      const wb = await startEra('stdio', era, config, undefined, {}, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
      try {
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev' } })) as CallToolResult;
        assert.deepEqual((opened.structuredContent as { servers_connected: string[] }).servers_connected.sort(), ['off', 'on'], textOf(opened));
        assert.ok(await waitFor(async () => (await cached(cacheDir)).includes('era:on') && (await cached(cacheDir)).includes('tools:on'), 10_000));
        assert.equal(textOf((await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'dev', tool_name: 'dev__off__echo', arguments: { text: 'x' } } })) as CallToolResult), 'echo: x');
      } finally {
        await wb.close();
      }
      try {
        assert.deepEqual((await cached(cacheDir)).filter((f) => f.endsWith(':off')), [], 'nothing of the server that opted out');
      } finally {
        await cleanup();
      }
    });
  }
});
