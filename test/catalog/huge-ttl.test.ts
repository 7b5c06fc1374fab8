import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { node, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// README "Caching hints": a server's `ttlMs` counts for at most 24 hours. The SDK's schema allows any non-negative
// integer (Number.MAX_SAFE_INTEGER included); a hint past the largest date used to break the server entirely — its
// toolbox answered CONNECT_FAILED and the workbench's own prompts/list "Invalid time value" — since writing its list to
// the catalog cache threw. Now the server is used as any other, and its cache files say it is fresh for 24 hours.

const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const DAY_MS = 24 * 60 * 60 * 1000;
const HUGE = String(Number.MAX_SAFE_INTEGER);

interface ListFile {
  kind: string;
  listedAt: string;
  freshUntil?: string;
}

async function listFiles(dir: string): Promise<ListFile[]> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const parsed = await Promise.all(files.filter((f) => f.endsWith('.json')).map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as ListFile));
  return parsed.filter((f) => f.kind === 'tools' || f.kind === 'prompts');
}

describe('a modern server whose ttlMs is larger than any date', () => {
  for (const era of ERAS) {
    it(`is connected, called and listed as any other, and cached as fresh for 24 hours (${era} client)`, async () => {
      const { dir, cleanup } = await tempDir('wb-huge-ttl-');
      const cacheDir = join(dir, 'cache');
      const config = { toolboxes: { dev: { mcpServers: { mod: { command: node, args: [modern, '--ttl-ms', HUGE, '--resources', HUGE] } } } } };
      const wb = await startEra('stdio', era, config, undefined, {}, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
      try {
        // Opened until connected: on a loaded machine the server may take longer to start than one open waits.
        let opened: CallToolResult | undefined;
        const connected = async (): Promise<boolean> => {
          opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev' } })) as CallToolResult;
          return (opened.structuredContent as { servers_pending?: unknown }).servers_pending === undefined;
        };
        assert.ok(await waitFor(connected, 120_000), 'the server connected');
        assert.notEqual(opened!.isError, true, textOf(opened!));
        assert.deepEqual((opened!.structuredContent as { servers_connected: string[] }).servers_connected, ['mod'], textOf(opened!));
        const echoed = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'dev', tool_name: 'dev__mod__echo', arguments: { text: 'hi' } } })) as CallToolResult;
        assert.equal(textOf(echoed), 'echo: hi');
        assert.ok(await waitFor(async () => (await listFiles(cacheDir)).length === 2, 60_000), 'its tools and prompts are cached');
        const prompts = await wb.client.listPrompts();
        assert.ok(prompts.prompts.some((p) => p.name === 'dev__mod__hello'), JSON.stringify(prompts));
        for (const file of await listFiles(cacheDir)) {
          assert.ok(file.freshUntil !== undefined, `${file.kind}: fresh by the server's hint`);
          assert.equal(Date.parse(file.freshUntil) - Date.parse(file.listedAt), DAY_MS, `${file.kind}: fresh for 24 hours, not for ever`);
        }
        assert.doesNotMatch(wb.stderr(), /Invalid time value|RangeError/);
      } finally {
        await wb.close();
        await cleanup();
      }
    });
  }
});
