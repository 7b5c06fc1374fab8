import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { DEFAULT_PARAMS, rankTools, searchIndex, searchTools, topUp, type Scored } from '../../src/catalog/search.js';
import { buildBridge, DEFAULT_BRIDGE } from '../../src/catalog/search-bridge.js';
import { corpusEntries, loadCorpus } from '../../bench/search/corpus.js';
import { meaningOf, serverMeanings, toolMeaningWords } from '../../src/catalog/search-meaning.js';
import { shippedVectors } from '../../src/catalog/word-vectors.js';
import { parseQuery } from '../../src/catalog/search-query.js';

/**
 * Short answers topped up by meaning (README "Search", "Topped up by meaning"): when fewer tools than asked for have
 * a word of the query, the tools nearest the query in meaning (the domain word vectors) follow them, marked.
 */

function tool(name: string, description: string, server = 's', title?: string): FullEntry {
  return {
    name: `memory__${server}__${name}`,
    toolbox_name: 'memory',
    source_server: server,
    original_name: name,
    ...(title !== undefined && { title }),
    description: `[memory/${server}] ${description}`,
    inputSchema: { type: 'object', properties: {} },
  };
}

const MEMORY = [
  tool('create_entities', 'Create new entities in the knowledge graph.'),
  tool('create_relations', 'Create relations between entities in the knowledge graph.'),
  tool('add_observations', 'Add new observations to existing entities.'),
  tool('delete_entities', 'Delete entities and their relations from the knowledge graph.'),
  tool('read_graph', 'Read the entire knowledge graph.'),
  tool('search_nodes', 'Search for nodes in the knowledge graph by a query.'),
];

const indexes = [searchIndex(MEMORY)];
const bridge = buildBridge(indexes);
const shown = (query: string, limit = 5, params = DEFAULT_PARAMS): Scored[] => {
  const parsed = parseQuery(query);
  return topUp(indexes, parsed, rankTools(indexes, parsed, { bridge, params }), limit, { bridge, params });
};
const named = (list: readonly Scored[]): string[] => list.map((s) => `${s.entry.original_name}${s.byMeaning ? '*' : ''}`);

describe('topped up by meaning (README "Search")', () => {
  it('answers a query none of whose words a tool has with the tools nearest it in meaning, marked', () => {
    const answer = shown('erase a person');
    assert.equal(answer[0]?.entry.original_name, 'delete_entities');
    assert.ok(answer.length > 1 && answer.length <= 5);
    assert.ok(answer.every((s) => s.byMeaning && s.loose && s.score === 0), JSON.stringify(named(answer)));
    assert.equal(new Set(answer.map((s) => s.entry)).size, answer.length, 'no tool twice');
    // searchTools (what the benchmark measures) answers the same.
    assert.deepEqual(searchTools(indexes, 'erase a person', 5, { bridge }), answer.map((s) => s.entry));
  });

  it('puts the word matches first and only fills up to the limit', () => {
    const answer = shown('delete');
    assert.equal(named(answer)[0], 'delete_entities');
    assert.ok(answer.slice(1).length > 0 && answer.slice(1).every((s) => s.byMeaning), JSON.stringify(named(answer)));
    assert.deepEqual(named(shown('delete', 1)), ['delete_entities']);
    // An answer already full gets nothing added.
    assert.ok(shown('knowledge graph').every((s) => !s.byMeaning));
  });

  it('adds nothing for words without vectors, below the least cosine, outside the qualifiers, or when turned off', () => {
    assert.deepEqual(shown('zzqx'), []);
    assert.deepEqual(shown('the'), [], 'stop words carry no meaning');
    assert.deepEqual(shown('forget a fact', 5, { ...DEFAULT_PARAMS, meaningMin: Infinity, englishMeaningMin: Infinity }), []);
    assert.deepEqual(shown('forget a fact', 5, { ...DEFAULT_PARAMS, meaningMin: 0.99, englishMeaningMin: 0.99 }), []);
    // Where the domain vectors find nothing near enough, the general-English ones top up (the domain vectors would
    // have answered otherwise).
    assert.equal(shown('forget a fact', 5, { ...DEFAULT_PARAMS, meaningMin: 0.99 })[0]?.entry.original_name, 'read_graph');
    assert.deepEqual(shown('server:other forget'), []);
    assert.ok(shown('server:s forget').length > 0);
    const parsed = parseQuery('forget a fact');
    assert.deepEqual(topUp(indexes, parsed, [], 5, {}), [], 'no vectors without the bridge');
  });

  it('follows a tool whose text changed (meanings are kept per entry object)', () => {
    const query = 'erase a person';
    const before = searchTools(indexes, query, 1, { bridge })[0]?.original_name;
    assert.equal(before, 'delete_entities');
    const changed = MEMORY.map((e) => (e.original_name === 'delete_entities' ? { ...e, original_name: 'ping', description: '[memory/s] Checks that the server answers.' } : e));
    const again = [searchIndex(changed)];
    const after = searchTools(again, query, 5, { bridge: buildBridge(again) }).map((e) => e.original_name);
    assert.ok(!after.includes('delete_entities') && after[0] !== 'ping', JSON.stringify(after));
  });

  it('weighs rare words above common ones, over the name, title and first sentence', () => {
    const vectors = shippedVectors('domain')!;
    const cos = (a: readonly string[], b: readonly string[]): number => {
      const x = meaningOf(vectors, a)!;
      const y = meaningOf(vectors, b)!;
      return x.reduce((s, v, i) => s + v * y[i]!, 0);
    };
    // "get" is common and "photo" or "directory" rare: a text about getting a photo is nearer an image than a fetch.
    assert.ok(cos(['get', 'photo'], ['image']) > cos(['get', 'photo'], ['fetch']));
    assert.ok(cos(['get', 'directory'], ['folder']) > cos(['get', 'directory'], ['fetch']), 'the rare word leads');
    assert.equal(meaningOf(vectors, ['zzqx', 'the']), undefined);
    const entry = tool('read_graph', 'Read the entire knowledge graph. Returns every entity.', 's', 'Read graph');
    assert.deepEqual(toolMeaningWords(entry), ['read', 'graph', 'read', 'graph', 'read', 'the', 'entire', 'knowledge', 'graph']);
  });
});

describe('words and meaning together (README "Search", "Meaning")', () => {
  // The frozen benchmark corpus (43 real servers), searched across every server as a global search does.
  const files = loadCorpus();
  const servers = new Map(files.map((f) => [`${f.server}/${f.server}`, f.description]));
  const all = [...corpusEntries(files).values()].map((entries) => searchIndex(entries, { servers }));
  const corpusBridge = buildBridge(all);
  const rankOf = (query: string, tool: string, params = DEFAULT_PARAMS, bridgeUsed = corpusBridge): number =>
    rankTools(all, parseQuery(query), { params, bridge: bridgeUsed }).findIndex((s) => `${s.entry.source_server}:${s.entry.original_name}` === tool) + 1;
  const wordsAlone = { ...DEFAULT_PARAMS, meaningWeight: 0, serverMeaningWeight: 0 };

  it('puts first the tool whose job the query describes, among tools that share its words', () => {
    const first = (query: string, params = DEFAULT_PARAMS): string => {
      const top = rankTools(all, parseQuery(query), { params, bridge: corpusBridge })[0]!.entry;
      return `${top.source_server}:${top.original_name}`;
    };
    assert.equal(first('sign in to microsoft'), 'ms-365:login');
    assert.equal(first('remove a branch'), 'gitlab-community:delete_branch');
    assert.match(first('make a folder'), /:create[-_].*(folder|directory)/);
    // By words alone, tools that share an incidental word come first (so the assertions above prove something).
    assert.ok(rankOf('sign in to microsoft', 'ms-365:login', wordsAlone) > 5);
    assert.equal(first('remove a branch', wordsAlone), 'gitlab-community:unprotect_branch');
    assert.match(first('make a folder', wordsAlone), /:list[-_]/);
  });

  it('lets meaning count for more where even the best word match is weak (wordScoreFloor)', () => {
    // The issue's own example: no tool has "XHR", and the best match by words (a screenshot tool, by "page") says
    // little; inside the playwright toolbox the network-requests tool comes first only with the floor.
    const playwright = [searchIndex(corpusEntries(files).get('playwright')!, { servers })];
    const firstIn = (params: typeof DEFAULT_PARAMS): string | undefined =>
      searchTools(playwright, 'which XHR calls did the page make', 1, { params, bridge: corpusBridge })[0]?.original_name;
    assert.equal(firstIn(DEFAULT_PARAMS), 'browser_network_requests');
    assert.equal(firstIn({ ...DEFAULT_PARAMS, wordScoreFloor: 0 }), 'browser_take_screenshot');
    // A query one tool matches well, in its name, keeps its order: the best match is above the floor.
    const same = (query: string): void =>
      assert.deepEqual(
        searchTools(playwright, query, 5, { bridge: corpusBridge }).map((e) => e.original_name),
        searchTools(playwright, query, 5, { params: { ...DEFAULT_PARAMS, wordScoreFloor: 0 }, bridge: corpusBridge }).map((e) => e.original_name),
        query,
      );
    same('take a screenshot of the page');
    same('navigate back');
  });

  it('answers by meaning in a toolbox of the memory and filesystem servers, where words alone do not', () => {
    // The same catalogs as test/core/search-real-servers.test.ts, which asks these through the protocol.
    const entries = corpusEntries(files);
    const mixed = [searchIndex([...entries.get('memory')!, ...entries.get('filesystem')!])];
    const mixedBridge = buildBridge(mixed);
    const first = (query: string, params = DEFAULT_PARAMS): string | undefined => searchTools(mixed, query, 5, { params, bridge: mixedBridge })[0]?.original_name;
    for (const [query, tool] of [
      ['delete a person', 'delete_entities'],
      ['forget a person', 'delete_entities'],
      ['view an image file', 'read_media_file'],
    ] as const) {
      assert.equal(first(query), tool, query);
      assert.notEqual(first(query, wordsAlone), tool, `${query}: words alone`);
    }
    // No tool has any word of these: the best word match is weak, so meaning decides (wordScoreFloor).
    for (const [query, tool, without] of [
      ['link two people', 'create_relations', 'read_multiple_files'],
      ['drop a fact', 'delete_observations', 'search_files'],
    ] as const) {
      assert.equal(first(query), tool, query);
      assert.equal(first(query, { ...DEFAULT_PARAMS, wordScoreFloor: 0 }), without, `${query}: out of the best match alone`);
    }
    // Two servers in one toolbox: the server the query is about (the same queries as test/core/search-real-servers).
    assert.equal(first('open several files at once'), 'read_multiple_files');
    assert.equal(first('open several files at once', { ...DEFAULT_PARAMS, serverMeaningWeight: 0 }), 'open_nodes');
    // A tool that matches no word competes by meaning (by words and reordering alone, read_multiple_files is first).
    assert.equal(first('erase a person'), 'delete_entities');
    assert.notEqual(first('erase a person', { ...DEFAULT_PARAMS, meaningCandidates: 0 }), 'delete_entities');
  });

  it("puts first, across servers, a tool of the server the query is about (its server's meaning)", () => {
    const first = (query: string, params = DEFAULT_PARAMS): string => {
      const top = rankTools(all, parseQuery(query), { params, bridge: corpusBridge })[0]!.entry;
      return `${top.source_server}:${top.original_name}`;
    };
    // The desktop server's process tools share the word "process"; the chart server is about diagrams.
    assert.equal(first('flowchart of the process'), 'chart:generate_flow_diagram');
    assert.match(first('flowchart of the process', { ...DEFAULT_PARAMS, serverMeaningWeight: 0 }), /^desktop-commander:/);
  });

  it("keeps one server's meaning per toolbox and server, and changes no order inside a toolbox of one server", () => {
    const vectors = corpusBridge.meaning!;
    const entries = corpusEntries(files);
    const mixed = searchIndex([...entries.get('memory')!, ...entries.get('filesystem')!]);
    const meanings = serverMeanings(vectors, [mixed]);
    assert.deepEqual([...meanings.keys()].sort(), ['filesystem/filesystem', 'memory/memory']);
    for (const m of meanings.values()) assert.ok(Math.abs(Math.hypot(...m) - 1) < 1e-5, 'unit length');
    assert.equal(serverMeanings(vectors, [mixed]).get('memory/memory'), meanings.get('memory/memory'), 'computed once per index');
    const one = [searchIndex(entries.get('filesystem')!)];
    const order = (params: typeof DEFAULT_PARAMS): string[] => rankTools(one, parseQuery('read a text file from the disk'), { params, bridge: corpusBridge }).map((s) => s.entry.name);
    assert.deepEqual(order(DEFAULT_PARAMS), order({ ...DEFAULT_PARAMS, serverMeaningWeight: 0 }));
  });

  it('lets a few tools that match no word but are near in meaning compete, marked, and reorders the rest', () => {
    // No tool of the image generator has "draw", "picture" or "sunset"; by meaning it joins the tools that share a word.
    const ranked = rankTools(all, parseQuery('draw a picture of a sunset'), { bridge: corpusBridge });
    const image = ranked.findIndex((s) => `${s.entry.source_server}:${s.entry.original_name}` === 'everart:generate_image');
    assert.ok(image >= 0 && image < 5, `rank ${image + 1}`);
    assert.ok(ranked[image]!.byMeaning && ranked[image]!.loose);
    assert.equal(rankOf('draw a picture of a sunset', 'everart:generate_image', { ...DEFAULT_PARAMS, meaningCandidates: 0 }), 0);
    // The tools that match a word are the same, only reordered; at most `meaningCandidates` join them.
    const parsed = parseQuery('make a folder');
    const byWords = new Set(rankTools(all, parsed, { params: wordsAlone, bridge: corpusBridge }).map((s) => s.entry));
    const withMeaning = rankTools(all, parsed, { bridge: corpusBridge });
    const joined = withMeaning.filter((s) => !byWords.has(s.entry));
    assert.ok(joined.length <= DEFAULT_PARAMS.meaningCandidates && joined.every((s) => s.byMeaning && s.loose));
    assert.ok(withMeaning.filter((s) => byWords.has(s.entry)).every((s) => !s.byMeaning));
    assert.equal(withMeaning.length - joined.length, byWords.size);
  });

  it('keeps an exact name first, and is off without the vectors', () => {
    assert.equal(rankTools(all, parseQuery('create_entities folder'), { bridge: corpusBridge })[0]?.entry.original_name, 'create_entities');
    const noVectors = buildBridge(all, DEFAULT_BRIDGE, null, null);
    assert.equal(noVectors.meaning, undefined);
    assert.equal(rankOf('make a folder', 'filesystem:create_directory', DEFAULT_PARAMS, noVectors), rankOf('make a folder', 'filesystem:create_directory', wordsAlone, buildBridge(all, DEFAULT_BRIDGE, undefined, null)));
  });
});
