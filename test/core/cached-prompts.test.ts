import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ERAS, eraClient, type EraName } from '../helpers/era-workbench.js';
import { fixtureEvents, fixtureServer, node, paths, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * Prompts of cached catalogs (README "Resources, prompts and completions"), end to end over stdio in both eras: a
 * server's prompt list is kept in the catalog cache when it connects, so the next process's prompts/list offers its
 * prompts without starting it (the fixture writes a `start` event to its log when it starts), and prompts/get on one
 * of them starts it on demand.
 */

describe('prompts of cached catalogs (stdio)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  before(async () => ({ dir, cleanup } = await tempDir('wb-cached-prompts-')));
  after(async () => cleanup());

  /** A workbench process of `run` (its own config, state file and cache) with an `era` client connected. */
  async function start(run: string, era: EraName): Promise<{ client: Client; close(): Promise<void> }> {
    const config = { toolboxes: { lab: { mcpServers: { a: fixtureServer('--resources', '--name', 'a', '--log', join(dir, run, 'a.jsonl')) } } } };
    const configPath = join(dir, run, 'workbench-config.json');
    await writeFile(configPath, JSON.stringify(config));
    const transport = new StdioClientTransport({
      command: node,
      args: [paths.cli, 'serve', '--config', configPath],
      cwd: join(dir, run),
      stderr: 'ignore',
      env: { PATH: process.env.PATH ?? '', HOME: join(dir, run), WORKBENCH_STATE_FILE: join(dir, run, 'tool-state.json'), MCP_WORKBENCH_CACHE_DIR: join(dir, run, 'cache') },
    });
    const client = eraClient(era);
    await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
    return { client, close: () => client.close() };
  }

  /** The kinds of the cache files written so far. */
  async function cachedKinds(run: string): Promise<string[]> {
    const files = await readdir(join(dir, run, 'cache')).catch(() => [] as string[]);
    const kinds = await Promise.all(files.filter((f) => f.endsWith('.json')).map(async (f) => (JSON.parse(await readFile(join(dir, run, 'cache', f), 'utf8')) as { kind: string }).kind));
    return kinds.sort();
  }

  for (const era of ERAS) {
    it(`lists a cached server's prompts without starting it, and prompts/get starts it (${era} client)`, async () => {
      const run = `run-${era}`;
      await rm(join(dir, run), { recursive: true, force: true });
      await mkdir(join(dir, run), { recursive: true });
      // A first process opens the toolbox: the server connects, and its prompts are kept beside its tools.
      const first = await start(run, era);
      try {
        const opened = (await first.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } })) as CallToolResult;
        assert.notEqual(opened.isError, true, JSON.stringify(opened));
        await waitFor(async () => (await cachedKinds(run)).includes('prompts'), { timeoutMs: 15_000, what: 'the prompt list in the cache' });
      } finally {
        await first.close();
      }
      assert.deepEqual(await cachedKinds(run), ['era', 'prompts', 'tools']);
      if (process.platform !== 'win32') {
        for (const file of await readdir(join(dir, run, 'cache'))) assert.equal((await stat(join(dir, run, 'cache', file))).mode & 0o777, 0o600);
      }
      await rm(join(dir, run, 'a.jsonl'), { force: true });

      const second = await start(run, era);
      try {
        const { prompts } = await second.client.listPrompts({}, { cacheMode: 'refresh' } as never);
        assert.deepEqual(prompts.map((p) => p.name), ['lab__a__greet', 'lab__a__secret-plan']);
        assert.deepEqual(prompts[0]?._meta?.['mcp-workbench/source'], { toolbox: 'lab', server: 'a' });
        assert.deepEqual(prompts[0]?.arguments, [{ name: 'who', description: 'Whom to greet', required: true }]);
        assert.deepEqual(await fixtureEvents(join(dir, run, 'a.jsonl')), [], 'listing cached prompts starts nothing');

        const got = await second.client.getPrompt({ name: 'lab__a__greet', arguments: { who: 'cache' } });
        assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'Hello cache from a' } }]);
        assert.equal((await fixtureEvents(join(dir, run, 'a.jsonl')))[0]?.event, 'start', 'prompts/get started the server');
      } finally {
        await second.close();
      }
    });
  }
});
