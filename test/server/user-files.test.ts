import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra, tokenClient } from '../helpers/era-workbench.js';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { missingCommandProblems } from '../../src/clients/command-check.js';
import { loadConfig } from '../../src/config/load.js';
import { fixtureServer, memoryServer, node, tempDir, waitFor } from '../helpers/workbench-process.js';

// A server that keeps its data in a file (the reference memory server's graph) is one file for all its processes, so
// over --http separate processes per user do not keep users apart by themselves: `${user:dir}` in the entry names a
// folder of the user each process serves (README "Files of each user"), and each user's graph is its own.

const TOKEN_A = 'alice-0123456789abcdef0123456789abcdef';
const TOKEN_B = 'bob-0123456789abcdef0123456789abcdef0123';
const CONFIG = { toolboxes: { notes: { mcpServers: { memory: memoryServer('${user:dir}/memory.jsonl') } } } };

/** The id a token's user has in `${user:id}` and in its folder's name. */
const userId = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 16);

async function client(url: string, token: string, era: 'modern' | 'legacy'): Promise<Client> {
  const c = await tokenClient(url, token, era);
  assert.equal(c.getProtocolEra(), era);
  return c;
}

async function memory(c: Client, tool: string, args: Record<string, unknown>): Promise<string> {
  const result = (await c.callTool({ name: 'use_tool', arguments: { toolbox_name: 'notes', tool_name: `notes__memory__${tool}`, arguments: args } })) as CallToolResult;
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  assert.ok(!result.isError, text);
  return text;
}

const entity = (name: string) => ({ entities: [{ name, entityType: 'project', observations: [`${name} is a project`] }] });

describe('${user:dir}: each user of an --http workbench has a memory graph of its own', () => {
  let wb: HttpWorkbench;
  before(async () => {
    wb = await startHttpWorkbench(CONFIG, ['--http', '0'], { WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}` });
  });
  after(async () => {
    await wb?.stop();
  });

  for (const [eraA, eraB] of [
    ['modern', 'legacy'],
    ['legacy', 'modern'],
  ] as const) {
    test(`a ${eraA} client of one token and a ${eraB} client of another never see each other's entities`, async () => {
      const a = await client(wb.url, TOKEN_A, eraA);
      const b = await client(wb.url, TOKEN_B, eraB);
      const [mine, theirs] = [`Zephyr-${eraA}`, `Orion-${eraB}`];
      try {
        await memory(a, 'create_entities', entity(mine));
        await memory(b, 'create_entities', entity(theirs));
        const graphA = await memory(a, 'read_graph', {});
        const graphB = await memory(b, 'read_graph', {});
        assert.match(graphA, new RegExp(mine));
        assert.doesNotMatch(graphA, new RegExp(theirs));
        assert.match(graphB, new RegExp(theirs));
        assert.doesNotMatch(graphB, new RegExp(mine));
      } finally {
        await Promise.allSettled([a.close(), b.close()]);
      }
      // Each user's file is in its own folder beside the state file, readable by the workbench's user only.
      const folder = join(wb.dir, 'users', userId(TOKEN_A));
      assert.match(await readFile(join(folder, 'memory.jsonl'), 'utf8'), new RegExp(mine));
      assert.equal((await stat(folder)).mode & 0o777, 0o700);
      assert.doesNotMatch(await readFile(join(wb.dir, 'users', userId(TOKEN_B), 'memory.jsonl'), 'utf8'), new RegExp(mine));
    });
  }
});

// A server started with the user's `${user:id}` (a header naming the user, a folder of its own) may list tools of that
// user's own: the list it gave one user is kept in the catalog cache for that user only, never shown to another.
describe('${user:…}: a tool list kept in the catalog cache', () => {
  const perUser = { toolboxes: { lab: { mcpServers: { own: { ...fixtureServer(), env: { FIXTURE_EXTRA_TOOLS: 'ledger_${user:id}' } } } } } };
  const search = async (c: Client): Promise<string> =>
    JSON.stringify(await c.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab', query: 'ledger' } }));

  for (const era of ['modern', 'legacy'] as const) {
    test(`is never shown to another token's ${era} client; its own server's list is`, async () => {
      const wb = await startHttpWorkbench(perUser, ['--http', '0'], { WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}` });
      const [idA, idB] = [userId(TOKEN_A), userId(TOKEN_B)];
      const a = await client(wb.url, TOKEN_A, era);
      let b: Client | undefined;
      try {
        assert.match(JSON.stringify(await a.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } })), new RegExp(`ledger_${idA}`));
        const cached = async (): Promise<string> => (await readdir(join(wb.dir, 'catalog-cache')).catch(() => [] as string[])).join();
        assert.ok(await waitFor(async () => (await cached()).includes('.json'), 5_000), "the first user's list is cached");
        b = await client(wb.url, TOKEN_B, era);
        // A search starts no server whose list is cached: B's first answer is what the cache holds for B.
        const first = await search(b);
        assert.doesNotMatch(first, new RegExp(idA), "the other user's list is not shown from the cache");
        await b.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } });
        assert.ok(await waitFor(async () => (await search(b!)).includes(`ledger_${idB}`), 10_000), "B's own server's list");
        assert.doesNotMatch(await search(b), new RegExp(idA));
      } finally {
        await Promise.allSettled([a.close(), b?.close()]);
        await wb.stop();
      }
    });
  }
});

describe('${user:dir} over stdio: the one user is `local`', () => {
  for (const era of ['modern', 'legacy'] as const) {
    test(`a ${era} client's graph is kept in users/local beside the state file`, async () => {
      const wb = await startEra('stdio', era, CONFIG);
      try {
        await memory(wb.client, 'create_entities', entity('Vega'));
        assert.match(await memory(wb.client, 'read_graph', {}), /Vega/);
        assert.match(await readFile(join(wb.dir, 'users', 'local', 'memory.jsonl'), 'utf8'), /Vega/);
      } finally {
        await wb.close();
      }
    });
  }
});

describe('${user:…} where the config is checked before any start', () => {
  test('a cwd under ${user:dir} is not reported missing (it is made at each start), and loading warns of nothing', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const path = join(dir, 'workbench-config.json');
    const entry = { command: node, args: ['--version'], cwd: '${user:dir}', env: { ID: '${user:id}' } };
    await writeFile(path, JSON.stringify({ toolboxes: { box: { mcpServers: { srv: entry } } } }));
    const loaded = await loadConfig(path, { PATH: process.env.PATH ?? '' });
    assert.deepEqual(loaded.warnings, []);
    assert.deepEqual([...missingCommandProblems(loaded, { PATH: process.env.PATH ?? '' }).keys()], []);
  });
});

describe('${user:dir} that cannot be made', () => {
  test("the server's call says which folder, why, and what to do; the workbench goes on", async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    // A file where the users' folders would go (beside the state file).
    await writeFile(join(dir, 'users'), 'not a folder');
    const wb = await startEra('stdio', 'legacy', CONFIG, undefined, {}, { env: { WORKBENCH_STATE_FILE: join(dir, 'tool-state.json') } });
    try {
      const result = (await wb.client.callTool({
        name: 'use_tool',
        arguments: { toolbox_name: 'notes', tool_name: 'notes__memory__read_graph', arguments: {} },
      })) as CallToolResult;
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      assert.equal(result.isError, true, text);
      assert.ok(text.includes(join(dir, 'users', 'local')), text);
      assert.match(text, /cannot be made: .*WORKBENCH_STATE_FILE/s);
    } finally {
      await wb.close();
    }
  });
});
