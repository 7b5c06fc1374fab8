import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Answer, FullEntry, IndexEntry, IndexGroup } from '../../src/catalog/catalog-index.js';
import { runWorkbench, startHttpWorkbench } from '../helpers/http-workbench.js';
import {
  everythingServer,
  filesystemServer,
  fixtureServer,
  memoryServer,
  startWorkbench,
  tempDir,
  textOf,
  waitFor,
  workbenchErrorCode,
  structuredAnswer,
} from '../helpers/workbench-process.js';
import { SEARCH_QUERIES, isExpected } from '../fixtures/search-queries.js';

type Transport = 'stdio' | 'http';

interface Session {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** The built workbench over stdio or Streamable HTTP, with one SDK client. */
async function start(transport: Transport, config: unknown, env: Record<string, string> = {}, args: string[] = []): Promise<Session> {
  if (transport === 'stdio') {
    const wb = await startWorkbench(config, { env, args });
    return { client: wb.client, call: wb.call, close: wb.close };
  }
  const wb = await startHttpWorkbench(config, ['--http', '127.0.0.1:0', ...args], env);
  const session = await wb.connect();
  return {
    client: session.client,
    call: (name, a) => session.client.callTool({ name, arguments: a }) as Promise<CallToolResult>,
    close: async () => {
      await session.close();
      await wb.stop();
    },
  };
}

async function open(s: Session, args: Record<string, unknown>): Promise<{ answer: Answer; text: string }> {
  const result = await s.call('open_toolbox', args);
  assert.notEqual(result.isError, true, textOf(result));
  const text = textOf(result);
  assert.deepEqual(JSON.parse(text), result.structuredContent, 'text and structuredContent carry the same answer');
  return { answer: structuredAnswer<Answer>(result, 'tools'), text };
}

/** Every canonical name an answer mentions, whatever the entry form. */
/** open_toolbox as it came, error or not. */
function openRaw(s: Session, args: Record<string, unknown>): Promise<CallToolResult> {
  return s.call('open_toolbox', args);
}

function namesIn(answer: Answer): string[] {
  return answer.tools.flatMap((t) =>
    'names' in t ? (t as IndexGroup).names.map((n) => `${(t as IndexGroup).prefix}${n}`) : [(t as FullEntry | IndexEntry).name],
  );
}

async function directTools(server: { command: string; args: string[]; env?: Record<string, string> }): Promise<Tool[]> {
  const client = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ ...server, env: { PATH: process.env.PATH ?? '', ...server.env }, stderr: 'ignore' }));
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

const BUDGET = 20_000;

for (const transport of ['stdio', 'http'] as const) {
  describe(`open_toolbox: budget, detail and search (${transport})`, () => {
    let s: Session;
    let data: { dir: string; cleanup: () => Promise<void> };
    const servers = {} as Record<'everything' | 'memory' | 'filesystem', { command: string; args: string[]; env?: Record<string, string> }>;

    before(async () => {
      data = await tempDir();
      await mkdir(join(data.dir, 'files'));
      servers.everything = everythingServer();
      servers.memory = memoryServer(join(data.dir, 'memory.jsonl'));
      servers.filesystem = filesystemServer(join(data.dir, 'files'));
      s = await start(transport, {
        toolboxes: {
          ref: { description: 'reference servers', mcpServers: servers },
          big: { description: '300 realistic tools', mcpServers: { fixture: fixtureServer('--catalog', '300') } },
          huge: { description: '1,000 tools', mcpServers: { fixture: fixtureServer('--tools', '1000') } },
          tight: { description: 'a small budget', catalogBudget: 2000, mcpServers: { fixture: fixtureServer('--catalog', '300') } },
        },
      });
    });
    after(async () => {
      await s.close();
      await data.cleanup();
    });

    it('offers the two meta-tools with alwaysLoad, honest schemas, and a tools/list under 2 KB', async () => {
      const { tools } = await s.client.listTools();
      assert.ok(Buffer.byteLength(JSON.stringify({ tools })) <= 2048, `tools/list is ${Buffer.byteLength(JSON.stringify({ tools }))} bytes`);
      for (const tool of tools) assert.equal(tool._meta?.['anthropic/alwaysLoad'], true, tool.name);
      const openTool = tools.find((t) => t.name === 'open_toolbox')!;
      assert.equal(openTool.inputSchema.additionalProperties, false);
      assert.deepEqual(Object.keys(openTool.inputSchema.properties ?? {}).sort(), ['cursor', 'detail', 'limit', 'query', 'toolbox_name', 'tools']);
      assert.match(s.client.getInstructions() ?? '', /query/);
    });

    it('answers a large toolbox with an index within the budget that names every tool', async () => {
      const { answer, text } = await open(s, { toolbox_name: 'big' });
      assert.equal(answer.detail, 'index');
      assert.ok(text.length <= BUDGET, `${text.length} characters`);
      const expected = (await directTools(fixtureServer('--catalog', '300'))).map((t) => `big__fixture__${t.name}`);
      assert.deepEqual(namesIn(answer).sort(), expected.sort());
      assert.equal(answer.next_cursor, undefined);
      assert.match(answer.hint ?? '', /tools/);
    });

    it('names every one of 1,000 tools in the default answer, within the budget', async () => {
      const { answer, text } = await open(s, { toolbox_name: 'huge' });
      assert.ok(text.length <= BUDGET, `${text.length} characters`);
      assert.equal(answer.next_cursor, undefined);
      const names = new Set(namesIn(answer));
      const expected = (await directTools(fixtureServer('--tools', '1000'))).map((t) => `huge__fixture__${t.name}`);
      assert.ok(expected.length > 1000);
      assert.deepEqual([...names].sort(), expected.sort());
    });

    it('pages names with a cursor only when names alone overflow, each page within the budget', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const { answer, text } = await open(s, { toolbox_name: 'tight', ...(cursor ? { cursor } : {}) });
        assert.ok(text.length <= 2000, `page ${pages}: ${text.length} characters`);
        seen.push(...namesIn(answer));
        cursor = answer.next_cursor;
        pages++;
      } while (cursor && pages < 100);
      assert.ok(pages > 1, 'the tight budget needs more than one page');
      const expected = (await directTools(fixtureServer('--catalog', '300'))).map((t) => `tight__fixture__${t.name}`);
      assert.deepEqual(seen, expected, 'every name once, in catalog order');
    });

    it('detail "full" forces the whole catalog', async () => {
      const { answer, text } = await open(s, { toolbox_name: 'big', detail: 'full' });
      assert.equal(answer.detail, 'full');
      assert.equal(answer.tools.length, (await directTools(fixtureServer('--catalog', '300'))).length);
      assert.ok(answer.tools.every((t) => 'inputSchema' in t));
      assert.ok(text.length > BUDGET);
    });

    it('returns full entries for named tools (canonical, bare, -/_ variants, globs), schemas byte for byte', async () => {
      const asked = ['ref__everything__get-sum', 'read_graph', 'read-text-file', 'ref__memory__delete_*', 'no_such_tool'];
      const { answer } = await open(s, { toolbox_name: 'ref', tools: asked });
      assert.equal(answer.detail, 'full');
      const got = answer.tools as FullEntry[];
      assert.deepEqual(
        got.map((t) => t.name),
        ['ref__everything__get-sum', 'ref__memory__read_graph', 'ref__filesystem__read_text_file', 'ref__memory__delete_entities', 'ref__memory__delete_observations', 'ref__memory__delete_relations'],
      );
      for (const server of ['everything', 'memory', 'filesystem'] as const) {
        const direct = await directTools(servers[server]);
        for (const entry of got.filter((t) => t.source_server === server)) {
          const tool = direct.find((t) => t.name === entry.original_name)!;
          // The SDK client re-orders keys when it parses tools/list, so values are compared, not key order.
          assert.deepEqual(entry.inputSchema, tool.inputSchema, entry.name);
          assert.deepEqual(entry.outputSchema, tool.outputSchema, entry.name);
          assert.deepEqual(entry.annotations, tool.annotations, entry.name);
          assert.ok(entry.description.startsWith(`[ref/${server}] `));
        }
      }
      assert.equal(answer.not_found?.[0]?.name, 'no_such_tool');
    });

    it('search finds the expected tool in the top 5 for every query of the query set, across all toolboxes', async () => {
      const misses: string[] = [];
      for (const q of SEARCH_QUERIES) {
        const { answer } = await open(s, { query: q.query });
        const top = (answer.tools as (FullEntry | IndexEntry)[]).filter((t) => !t.name.startsWith('huge__') && !t.name.startsWith('tight__'));
        if (!top.some((t) => 'original_name' in t && isExpected(q, t))) misses.push(`${q.query} -> ${top.map((t) => t.name).join(', ')}`);
      }
      assert.deepEqual(misses, []);
    });

    it('search narrows with server: and toolbox: qualifiers, and puts a quoted exact name first', async () => {
      const { answer } = await open(s, { query: 'server:memory read', limit: 20 });
      assert.ok(answer.tools.length > 0);
      assert.ok((answer.tools as FullEntry[]).every((t) => t.source_server === 'ref/memory' || t.source_server === 'memory'), JSON.stringify(answer.tools.map((t) => (t as FullEntry).name)));
      const quoted = await open(s, { toolbox_name: 'ref', query: '"read_graph" file' });
      assert.equal((quoted.answer.tools[0] as FullEntry).original_name, 'read_graph');
      assert.doesNotMatch(quoted.answer.hint ?? '', /No tool is named/);
      // A quoted name no tool has: what shares its words still comes, and the hint says none is that tool.
      const missing = await open(s, { toolbox_name: 'ref', query: '"delete_universe"' });
      assert.ok(missing.answer.tools.length > 0);
      assert.ok((missing.answer.tools as FullEntry[]).every((t) => t.original_name !== 'delete_universe'));
      assert.match(missing.answer.hint ?? '', /^No tool here is named "delete_universe": these share words with it, so check that one fits/);
    });

    it('a search that matches nothing in its toolbox names the toolbox where the query matches', async () => {
      await open(s, { toolbox_name: 'big', query: 'invoices' });
      const { answer } = await open(s, { toolbox_name: 'ref', query: 'invoices' });
      // No reference tool has the word: what comes is only near it in meaning, and the hint says so and where it is.
      assert.ok(answer.tools.every((t) => (t as FullEntry).toolbox_name === 'ref'));
      if (answer.tools.length > 0) assert.match(answer.hint ?? '', /No tool here has a word of the query: (this is the tool|these are the tools) nearest to it in meaning/);
      assert.match(answer.hint ?? '', /toolbox "big" \(big__fixture__/);
      const nothing = await open(s, { toolbox_name: 'ref', query: 'zzqx' });
      assert.deepEqual(nothing.answer.tools, []);
      assert.match(nothing.answer.hint ?? '', /No tool matched/);
    });

    it('search is deterministic and its answers respect the budget', async () => {
      const a = await open(s, { toolbox_name: 'tight', query: 'create issue', limit: 20 });
      const b = await open(s, { toolbox_name: 'tight', query: 'create issue', limit: 20 });
      assert.equal(a.text, b.text);
      assert.ok(a.text.length <= 2000, `${a.text.length} characters`);
      assert.notEqual(a.answer.detail, 'full', 'twenty full entries cannot fit 2,000 characters');
      assert.ok(namesIn(a.answer)[0]!.startsWith('tight__fixture__'));
    });

    it('an INVALID_ARGUMENTS result carries the tool\'s input schema', async () => {
      const result = await s.call('use_tool', { toolbox_name: 'ref', tool_name: 'get-sum', arguments: { a: 'one' } });
      assert.equal(workbenchErrorCode(result), 'INVALID_ARGUMENTS');
      const direct = (await directTools(servers.everything)).find((t) => t.name === 'get-sum')!;
      const schema = /inputSchema: (\{.*\})$/m.exec(textOf(result));
      assert.ok(schema, textOf(result));
      assert.deepEqual(JSON.parse(schema[1]!), direct.inputSchema);
    });

    it('refuses malformed parameters with an isError result showing the signature', async () => {
      for (const args of [{}, { toolbox_name: 'ref', tools: ['a'], query: 'b' }, { query: 'x', limit: 21 }, { toolbox_name: 'ref', detail: 'some' }, { toolbox_name: 'ref', cursor: 'x' }, { toolbox_name: 'ref', query: 'sum', cursor: '5' }]) {
        const result = await s.call('open_toolbox', args);
        assert.equal(result.isError, true, JSON.stringify(args));
        assert.equal(workbenchErrorCode(result), 'INVALID_PARAMETERS', JSON.stringify(args));
        assert.match(textOf(result), /Expected: open_toolbox \{/, JSON.stringify(args));
        const meta = result._meta?.['mcp-workbench/error'] as { hint?: string } | undefined;
        assert.match(meta?.hint ?? '', /^Expected: open_toolbox \{/, 'the signature is the hint too');
      }
    });
  });

  describe(`open_toolbox: where the budget comes from (${transport})`, () => {
    it('a toolbox\'s catalogBudget beats --catalog-budget, which beats the top-level catalogBudget', async () => {
      const s = await start(
        transport,
        {
          catalogBudget: 1000,
          toolboxes: {
            flag: { mcpServers: { fixture: fixtureServer('--catalog', '100') } },
            own: { catalogBudget: 500_000, mcpServers: { fixture: fixtureServer('--catalog', '100') } },
          },
        },
        {},
        ['--catalog-budget', '6000'],
      );
      try {
        const flag = await open(s, { toolbox_name: 'flag' });
        assert.ok(flag.text.length <= 6000 && flag.text.length > 1000, `${flag.text.length} characters`);
        assert.match(s.client.getInstructions() ?? '', /6000 characters/);
        const own = await open(s, { toolbox_name: 'own' });
        assert.equal(own.answer.detail, 'full');
      } finally {
        await s.close();
      }
    });

    it("a project file's catalogBudget only lowers the budget in force, never raises it", async () => {
      const { dir, cleanup } = await tempDir('wb-project-budget-');
      const config = {
        catalogBudget: 3000,
        toolboxes: {
          top: { mcpServers: { fixture: fixtureServer('--catalog', '100') } },
          own: { catalogBudget: 500_000, mcpServers: { fixture: fixtureServer('--catalog', '100') } },
        },
      };
      try {
        // A cloned repository asking for more: answers stay within the config's budget.
        await writeFile(join(dir, '.mcp-workbench.json'), JSON.stringify({ catalogBudget: 5_000_000 }));
        let s = await start(transport, config, {}, ['--project', dir]);
        try {
          const top = await open(s, { toolbox_name: 'top' });
          assert.ok(top.text.length <= 3000, `${top.text.length} characters`);
          assert.notEqual(top.answer.detail, 'full');
        } finally {
          await s.close();
        }
        // Asking for less lowers even a toolbox's own budget.
        await writeFile(join(dir, '.mcp-workbench.json'), JSON.stringify({ catalogBudget: 2000 }));
        s = await start(transport, config, {}, ['--project', dir]);
        try {
          const own = await open(s, { toolbox_name: 'own' });
          assert.ok(own.text.length <= 2000, `${own.text.length} characters`);
        } finally {
          await s.close();
        }
      } finally {
        await cleanup();
      }
    });
  });

  describe(`open_toolbox: catalog cache (${transport})`, () => {
    let cache: { dir: string; cleanup: () => Promise<void> };
    before(async () => {
      cache = await tempDir('wb-cache-');
    });
    after(() => cache.cleanup());

    /** Config with one fixture server; env values vary, names stay, so the launch key is the same. */
    const config = (env: Record<string, string>) => ({
      toolboxes: { c: { description: 'cached', mcpServers: { fixture: { ...fixtureServer('--catalog', '40'), env: { SECRET_TOKEN: 'sekrit-value-123', FIXTURE_CRASH_ON_START: '', FIXTURE_EXTRA_TOOLS: '', ...env } } } } },
    });
    const files = async (dir: string): Promise<string[]> => (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));
    /** The cache files that hold tool lists (the others hold each server's protocol era). */
    const listFiles = async (dir: string): Promise<string[]> => {
      const found: string[] = [];
      for (const f of await files(dir)) if ((await readFile(join(dir, f), 'utf8')).includes('"kind":"tools"')) found.push(f);
      return found;
    };

    it('a second process answers from the cache before its server starts; calls still need the live server', async () => {
      const dir = join(cache.dir, 'first');
      const first = await start(transport, config({}), { MCP_WORKBENCH_CACHE_DIR: dir });
      const warm = await open(first, { toolbox_name: 'c' });
      await first.close();
      assert.equal((await listFiles(dir)).length, 1);
      for (const f of await files(dir)) assert.ok(!(await readFile(join(dir, f), 'utf8')).includes('sekrit-value-123'), 'no env values in the cache');

      // Same launch config, but the server now fails to start: only the cache can answer.
      const second = await start(transport, config({ FIXTURE_CRASH_ON_START: '3' }), { MCP_WORKBENCH_CACHE_DIR: dir });
      try {
        const cold = await open(second, { toolbox_name: 'c' });
        assert.deepEqual(namesIn(cold.answer), namesIn(warm.answer));
        // Labelled as the last known list, with its age, not as connected.
        assert.deepEqual(cold.answer.servers_connected, []);
        assert.deepEqual(cold.answer.servers_cached?.map((c) => c.server), ['fixture']);
        assert.match(cold.answer.servers_cached?.[0]?.age ?? '', /^\d+ (s|min)$/);
        assert.equal(cold.answer.servers_cached?.[0]?.state, 'checking');
        assert.match(cold.answer.servers_cached_note ?? '', /calls always use the live server\. checking: being connected now/);
        const name = namesIn(cold.answer)[0]!;
        const call = await second.call('use_tool', { toolbox_name: 'c', tool_name: name, arguments: {} });
        assert.equal(workbenchErrorCode(call), 'CONNECT_FAILED');
        // Its last connect failed: no longer shown from the cache; with no server left, the answer is an error result
        // that still carries the full report.
        const again = await openRaw(second, { toolbox_name: 'c' });
        assert.equal(again.isError, true);
        assert.deepEqual((again.structuredContent?.servers_failed as { server: string }[]).map((f) => f.server), ['fixture']);
      } finally {
        await second.close();
      }
    });

    it('a live catalog that differs replaces the cached one (calls resolve against the live one)', async () => {
      const dir = join(cache.dir, 'changed');
      const first = await start(transport, config({ FIXTURE_EXTRA_TOOLS: 'old_tool' }), { MCP_WORKBENCH_CACHE_DIR: dir });
      await open(first, { toolbox_name: 'c' });
      await first.close();

      const second = await start(transport, config({ FIXTURE_EXTRA_TOOLS: 'new_tool' }), { MCP_WORKBENCH_CACHE_DIR: dir });
      try {
        const cached = await open(second, { toolbox_name: 'c', tools: ['old_tool', 'new_tool'] });
        assert.deepEqual(namesIn(cached.answer), ['c__fixture__old_tool'], 'the first answer comes from the cache');
        const gone = await second.call('use_tool', { toolbox_name: 'c', tool_name: 'c__fixture__old_tool', arguments: {} });
        assert.equal(workbenchErrorCode(gone), 'TOOL_NOT_FOUND');
        const fresh = await second.call('use_tool', { toolbox_name: 'c', tool_name: 'c__fixture__new_tool', arguments: {} });
        assert.equal(textOf(fresh), 'new_tool');
        const live = await open(second, { toolbox_name: 'c', tools: ['old_tool', 'new_tool'] });
        assert.deepEqual(namesIn(live.answer), ['c__fixture__new_tool']);
        const file = join(dir, (await listFiles(dir))[0]!);
        assert.ok(await waitFor(async () => (await readFile(file, 'utf8')).includes('new_tool'), 10_000), 'the cache file is rewritten');
      } finally {
        await second.close();
      }
    });

    it('ignores a corrupt cache file and rewrites it; --no-catalog-cache writes nothing', async () => {
      const dir = join(cache.dir, 'corrupt');
      const first = await start(transport, config({}), { MCP_WORKBENCH_CACHE_DIR: dir });
      const expected = namesIn((await open(first, { toolbox_name: 'c' })).answer);
      await first.close();
      const file = join(dir, (await listFiles(dir))[0]!);
      await writeFile(file, '{"format": 2, "kind":"tools", "tools": [ not json');

      const second = await start(transport, config({}), { MCP_WORKBENCH_CACHE_DIR: dir });
      try {
        const answer = (await open(second, { toolbox_name: 'c' })).answer;
        assert.deepEqual(namesIn(answer), expected);
        const rewritten = async (): Promise<boolean> => {
          try {
            return (JSON.parse(await readFile(file, 'utf8')) as { tools?: unknown[] }).tools?.length === expected.length;
          } catch {
            return false;
          }
        };
        assert.ok(await waitFor(rewritten, 10_000), 'the corrupt file is rewritten');
      } finally {
        await second.close();
      }

      const off = join(cache.dir, 'off');
      const third = await start(transport, config({}), { MCP_WORKBENCH_CACHE_DIR: off }, ['--no-catalog-cache']);
      try {
        await open(third, { toolbox_name: 'c' });
        await third.call('use_tool', { toolbox_name: 'c', tool_name: expected[0]!, arguments: {} });
      } finally {
        await third.close();
      }
      assert.deepEqual(await files(off), []);
    });
  });
}

describe('serve --catalog-budget', () => {
  it('refuses a value that is not a whole number of at least 1,000 characters, as a usage error', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const config = join(dir, 'workbench-config.json');
      await writeFile(config, JSON.stringify({ toolboxes: { a: { mcpServers: { f: fixtureServer() } } } }));
      const run = await runWorkbench(['serve', '--config', config, '--catalog-budget', '12']);
      assert.equal(run.code, 2);
      // commander's own usage error, plain text (README "Command line", Logs): it must name the option and the value
      assert.match(run.stderr, /'--catalog-budget <chars>' argument '12' is invalid/);
    } finally {
      await cleanup();
    }
  });
});
