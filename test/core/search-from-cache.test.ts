import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Answer } from '../../src/catalog/catalog-index.js';
import { ERAS, startEra, type EraName, type EraWorkbench, type Over } from '../helpers/era-workbench.js';
import { fixtureServer, structuredAnswer, tempDir, textOf } from '../helpers/workbench-process.js';

/**
 * Search without starting the world (README "open_toolbox", Search), end to end on each transport and with a client of
 * each protocol era: with every catalog cached, a search across toolboxes, inside one or inside a toolset answers from
 * the cache and starts no server (each fixture server writes a log file when it starts); a server that cannot start
 * is named with why and what to do, and the answer is not an error; a search that finds nothing still names the
 * closest tools and the toolboxes to look in; one whose words no tool has answers the tools nearest it in meaning.
 */

const PATHS = (['stdio', 'http'] as const).flatMap((over: Over) => ERAS.map((era: EraName) => ({ over, era })));

for (const { over, era } of PATHS) describe(`search from cached catalogs (${over}, ${era} client)`, () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  before(async () => ({ dir, cleanup } = await tempDir(`wb-search-cache-${over}-${era}-`)));
  after(async () => cleanup());

  /** Each test its own cache, state file and start markers, under `run`. */
  const marker = (run: string, name: string): string => join(dir, run, `${name}-started.jsonl`);
  const config = (run: string, withBroken: boolean): unknown => ({
    toolboxes: {
      tools: { description: 'Echo and arithmetic', mcpServers: { fixture: fixtureServer('--log', marker(run, 'tools')) } },
      files: { description: 'Generated file tools', mcpServers: { catalog: fixtureServer('--name', 'catalog', '--catalog', '30', '--log', marker(run, 'files')) } },
      ...(withBroken && { broken: { description: 'A server that never starts', mcpServers: { crashy: fixtureServer('--crash-on-start', '3') } } }),
    },
    ...(withBroken && { toolsets: { quick: { description: 'Echo and the generated file tools', tools: ['tools__fixture__echo', 'files__catalog__*'] } } }),
  });
  async function start(run: string, withBroken: boolean): Promise<EraWorkbench> {
    const wb = await startEra(over, era, config(run, withBroken), undefined, undefined, {
      env: { MCP_WORKBENCH_CACHE_DIR: join(dir, run, 'cache'), WORKBENCH_STATE_FILE: join(dir, run, 'tool-state.json') },
    });
    assert.equal(wb.client.getProtocolEra(), era);
    return wb;
  }
  const call = async (wb: EraWorkbench, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
    (await wb.client.callTool({ name, arguments: args })) as CallToolResult;

  /** A first process lists every toolbox (filling the cache); then the start markers are removed. */
  async function warm(run: string): Promise<void> {
    mkdirSync(join(dir, run), { recursive: true });
    const first = await start(run, false);
    try {
      for (const toolbox of ['tools', 'files']) {
        const opened = await call(first, 'open_toolbox', { toolbox_name: toolbox });
        assert.notEqual(opened.isError, true, textOf(opened));
      }
    } finally {
      await first.close();
    }
    for (const name of ['tools', 'files']) rmSync(marker(run, name), { force: true });
  }

  async function search(wb: EraWorkbench, args: Record<string, unknown>): Promise<{ answer: Answer; isError: boolean; text: string }> {
    const result = await call(wb, 'open_toolbox', args);
    return { answer: structuredAnswer<Answer>(result, 'tools'), isError: result.isError === true, text: textOf(result) };
  }

  it('answers global and scoped searches from the cache without starting a server; a call still starts it', async () => {
    await warm('cached');
    const startedMarker = (name: string): string => marker('cached', name);
    const wb = await start('cached', true);
    try {
      const global = await search(wb, { query: 'echo text back' });
      assert.equal(global.isError, false, global.text);
      assert.equal(global.answer.tools[0] && 'name' in global.answer.tools[0] ? global.answer.tools[0].name : undefined, 'tools__fixture__echo');
      assert.deepEqual(global.answer.servers_cached?.map((c) => c.server).sort(), ['files/catalog', 'tools/fixture']);
      assert.deepEqual(global.answer.servers_cached?.map((c) => c.state), ['unchecked', 'unchecked']);
      // What it means is said once for the whole list, not once per server.
      assert.match(global.answer.servers_cached_note ?? '', /^These servers' tools are from their last known lists; calls always use the live server\. unchecked: not started for a search; opening its toolbox without a query checks it\.$/);
      // The broken server has no cached list: it was tried, and is named with why and what to do.
      assert.deepEqual(global.answer.servers_failed.map((f) => f.server), ['broken/crashy']);
      assert.deepEqual(
        { kind: global.answer.servers_failed[0]!.failure?.kind, exitCode: global.answer.servers_failed[0]!.failure?.exitCode },
        { kind: 'exited', exitCode: 3 },
      );

      const scoped = await search(wb, { toolbox_name: 'files', query: 'list' });
      assert.equal(scoped.isError, false);
      assert.ok(scoped.answer.tools.length > 0);
      assert.deepEqual(scoped.answer.servers_cached?.map((c) => c.server), ['catalog']);

      // A near spelling finds the tool, and the answer says no word matched as written.
      const misspelt = await search(wb, { toolbox_name: 'tools', query: 'ecko' });
      assert.equal(misspelt.answer.tools[0] && 'name' in misspelt.answer.tools[0] ? misspelt.answer.tools[0].name : undefined, 'tools__fixture__echo');
      assert.match(misspelt.answer.hint ?? '', /None of these tools has a word of the query as written/);

      // A word no tool here has, but an English one: the tools nearest it in meaning, said to be so
      // (beside the broken server, from the cache, nothing started).
      const near = await search(wb, { toolbox_name: 'tools', query: 'plus' });
      assert.equal(near.answer.tools[0] && 'name' in near.answer.tools[0] ? near.answer.tools[0].name : undefined, 'tools__fixture__add');
      assert.ok(near.answer.tools.length <= 5, 'no more than the default limit');
      assert.match(near.answer.hint ?? '', /No tool here has a word of the query: these are the tools nearest to it in meaning/);
      assert.equal(near.isError, false);

      // Inside a toolset: the same, limited to the toolset's tools, servers named toolbox/server.
      const toolset = await search(wb, { toolbox_name: 'quick', query: 'echo text back' });
      assert.equal(toolset.isError, false);
      assert.equal(toolset.answer.tools[0] && 'name' in toolset.answer.tools[0] ? toolset.answer.tools[0].name : undefined, 'tools__fixture__echo');
      assert.ok(toolset.answer.tools.every((t) => 'name' in t && /^(tools__fixture__echo|files__catalog__)/.test(t.name)));
      assert.deepEqual(toolset.answer.servers_cached?.map((c) => c.server).sort(), ['files/catalog', 'tools/fixture']);

      // Searched again within a minute, the broken server is named from its last failure, not started again.
      const again = await search(wb, { query: 'echo' });
      assert.match(again.answer.servers_failed[0]!.error, /not started again for this search/);

      assert.equal(existsSync(startedMarker('tools')), false, 'a search started the tools server');
      assert.equal(existsSync(startedMarker('files')), false, 'a search started the files server');

      // A call needs the live server: it starts it (so the marker does tell).
      assert.equal(textOf(await call(wb, 'use_tool', { toolbox_name: 'tools', tool_name: 'echo', arguments: { text: 'hi' } })), 'hi');
      assert.equal(existsSync(startedMarker('tools')), true);
      assert.equal(existsSync(startedMarker('files')), false);
    } finally {
      await wb.close();
    }
  });

  it('server: and toolbox: qualifiers leave the other servers alone; alone, they list the tools they keep', async () => {
    await warm('qualified');
    const wb = await start('qualified', true);
    try {
      // Qualifiers alone: that server's tools in catalog order; the never-cached broken server is not even tried.
      const listed = await search(wb, { query: 'server:catalog' });
      assert.equal(listed.isError, false, listed.text);
      assert.equal(listed.answer.tools.length, 5);
      assert.ok(listed.answer.tools.every((t) => t.source_server === 'catalog'));
      const count = Number(/(\d+) tools match server:catalog; these are the first 5/.exec(listed.answer.hint ?? '')?.[1]);
      assert.ok(count >= 30, listed.answer.hint);
      assert.match(listed.answer.hint ?? '', /higher limit/);
      // At the largest limit the next step is words or the toolbox's index, not a limit that cannot be given.
      const most = await search(wb, { query: 'server:catalog', limit: 20 });
      assert.equal(most.answer.tools.length, 20);
      assert.doesNotMatch(most.answer.hint ?? '', /higher limit/);
      assert.match(most.answer.hint ?? '', /without a query/);
      assert.deepEqual(listed.answer.servers_failed, [], 'the broken server was started for a search that leaves it out');
      assert.deepEqual(listed.answer.servers_cached?.map((c) => c.server), ['files/catalog']);

      // With words: ranked inside what the qualifier keeps; a stop word alone still lists.
      const ranked = await search(wb, { query: 'toolbox:tools echo text back', limit: 2 });
      assert.equal(ranked.answer.tools[0] && 'name' in ranked.answer.tools[0] ? ranked.answer.tools[0].name : undefined, 'tools__fixture__echo');
      assert.deepEqual(ranked.answer.servers_failed, []);
      assert.equal((await search(wb, { query: 'the server:fixture', limit: 20 })).answer.tools.every((t) => t.source_server === 'fixture'), true);

      // A qualifier that names nothing says so, with the servers there are.
      const nowhere = await search(wb, { query: 'toolbox:nope echo' });
      assert.deepEqual(nowhere.answer.tools, []);
      assert.match(nowhere.answer.hint ?? '', /No server matches toolbox:nope\. Servers \(toolbox\/server\): tools\/fixture, files\/catalog, broken\/crashy\./);
      const inside = await search(wb, { toolbox_name: 'files', query: 'server:nope list' });
      assert.deepEqual(inside.answer.tools, []);
      assert.match(inside.answer.hint ?? '', /No server in toolbox "files" matches server:nope\. Its servers: catalog\./);
      assert.deepEqual(inside.answer.servers_failed, []);
      // Inside a toolset, too: only the servers the qualifier keeps are reached and named.
      const inToolset = await search(wb, { toolbox_name: 'quick', query: 'server:fixture echo' });
      assert.deepEqual(inToolset.answer.servers_cached?.map((c) => c.server), ['tools/fixture']);
      assert.ok(inToolset.answer.tools.length > 0 && inToolset.answer.tools.every((t) => t.source_server === 'fixture'));

      // Closest names keep to the qualifier too.
      const unknown = await search(wb, { query: 'server:catalog zzqx' });
      assert.match(unknown.answer.hint ?? '', /Closest names: files__catalog__/);
      assert.doesNotMatch(unknown.answer.hint ?? '', /tools__fixture__/);
      assert.equal(existsSync(marker('qualified', 'files')), false, 'a search started the files server');
      assert.equal(existsSync(marker('qualified', 'tools')), false, 'a search started the tools server');
    } finally {
      await wb.close();
    }
  });

  it('a search that finds nothing names the closest tools and the toolboxes to look in', async () => {
    await warm('empty');
    const wb = await start('empty', false);
    try {
      const global = await search(wb, { query: 'zzqx' });
      assert.deepEqual(global.answer.tools, []);
      assert.match(global.answer.hint ?? '', /Closest names: \w+__\w+__\w+/);
      assert.match(global.answer.hint ?? '', /Toolboxes to look in: tools \(Echo and arithmetic\), files \(Generated file tools\)/);

      // Inside one toolbox: the other toolbox's cached tools are searched for the hint, without starting it.
      const scoped = await search(wb, { toolbox_name: 'tools', query: 'svc' });
      assert.deepEqual(scoped.answer.tools, []);
      assert.match(scoped.answer.hint ?? '', /It matches in toolbox "files" \(files__catalog__svc/);
      assert.equal(existsSync(marker('empty', 'files')), false, 'the hint started the files server');

    } finally {
      await wb.close();
    }
  });
});
