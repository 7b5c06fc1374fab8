import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, tokenClient } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

/**
 * README "Catalog cache" ("What a session changed stays its own"): an isolated session's prompt list is kept only as
 * its server listed it on connecting. The background listing used to run after the call that started the server, so
 * a prompt that call added for its session was written to the cache and offered to another user's prompts/list.
 */
const TOKEN_A = 'alice-token-0123456789';
const TOKEN_B = 'bobby-token-0123456789';

for (const era of ERAS) {
  test(`a prompt a session's first call added is not kept for another user (${era} clients)`, async () => {
    const { dir, cleanup } = await tempDir('wb-prompt-isolation-');
    const cacheDir = join(dir, 'cache');
    const config = { toolboxes: { lab: { mcpServers: { a: fixtureServer('--resources', '--name', 'a') } } } };
    const wb = await startHttpWorkbench(config, ['--http', '127.0.0.1:0'], { WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}`, MCP_WORKBENCH_CACHE_DIR: cacheDir });
    try {
      const alice = await tokenClient(wb.url, TOKEN_A, era);
      const added = (await alice.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'lab__a__add_prompt', arguments: { name: 'alice-only' } } })) as CallToolResult;
      assert.equal(textOf(added), 'added alice-only');
      const promptFiles = async (): Promise<string[]> => {
        const files = (await readdir(cacheDir).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));
        const texts = await Promise.all(files.map((f) => readFile(join(cacheDir, f), 'utf8')));
        return texts.filter((text) => (JSON.parse(text) as { kind: string }).kind === 'prompts');
      };
      await waitFor(async () => (await promptFiles()).length > 0, { timeoutMs: 30_000, what: 'the prompt list of the server in the cache' });
      assert.doesNotMatch((await promptFiles()).join('\n'), /alice-only/);
      const bob = await tokenClient(wb.url, TOKEN_B, era);
      const names = (await bob.listPrompts()).prompts.map((p) => p.name);
      assert.ok(names.includes('lab__a__greet'), names.join(', '));
      assert.ok(!names.includes('lab__a__alice-only'), names.join(', '));
      await Promise.allSettled([alice.close(), bob.close()]);
    } finally {
      await wb.stop();
      await cleanup();
    }
  });
}
