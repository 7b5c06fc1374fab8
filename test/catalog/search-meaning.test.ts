import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { DEFAULT_PARAMS, rankTools, searchIndex, searchTools, topUp, type Scored } from '../../src/catalog/search.js';
import { buildBridge } from '../../src/catalog/search-bridge.js';
import { meaningOf, toolMeaningWords } from '../../src/catalog/search-meaning.js';
import { shippedEnglishVectors } from '../../src/catalog/search-english.js';
import { parseQuery } from '../../src/catalog/search-query.js';

/**
 * Short answers topped up by meaning (README "Search", "Topped up by meaning"): when fewer tools than asked for have
 * a word of the query, the tools nearest the query in meaning (general-English word vectors) follow them, marked.
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
    const answer = shown('show everything you remember');
    assert.equal(answer[0]?.entry.original_name, 'read_graph');
    assert.ok(answer.length > 1 && answer.length <= 5);
    assert.ok(answer.every((s) => s.byMeaning && s.loose && s.score === 0), JSON.stringify(named(answer)));
    assert.equal(new Set(answer.map((s) => s.entry)).size, answer.length, 'no tool twice');
    // searchTools (what the benchmark measures) answers the same.
    assert.deepEqual(searchTools(indexes, 'show everything you remember', 5, { bridge }), answer.map((s) => s.entry));
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
    assert.deepEqual(shown('show everything you remember', 5, { ...DEFAULT_PARAMS, meaningMin: Infinity }), []);
    assert.deepEqual(shown('show everything you remember', 5, { ...DEFAULT_PARAMS, meaningMin: 0.99 }), []);
    assert.deepEqual(shown('server:other remember'), []);
    assert.ok(shown('server:s remember').length > 0);
    const parsed = parseQuery('show everything you remember');
    assert.deepEqual(topUp(indexes, parsed, [], 5, {}), [], 'no vectors without the bridge');
  });

  it('follows a tool whose text changed (meanings are kept per entry object)', () => {
    const query = 'show everything you remember';
    const before = searchTools(indexes, query, 1, { bridge })[0]?.original_name;
    assert.equal(before, 'read_graph');
    const changed = MEMORY.map((e) => (e.original_name === 'read_graph' ? { ...e, original_name: 'ping', description: '[memory/s] Checks that the server answers.' } : e));
    const again = [searchIndex(changed)];
    const after = searchTools(again, query, 5, { bridge: buildBridge(again) }).map((e) => e.original_name);
    assert.ok(!after.includes('read_graph') && after[0] !== 'ping', JSON.stringify(after));
  });

  it('weighs rare words above common ones, over the name, title and first sentence', () => {
    const vectors = shippedEnglishVectors()!;
    const cos = (a: readonly string[], b: readonly string[]): number => {
      const x = meaningOf(vectors, a)!;
      const y = meaningOf(vectors, b)!;
      return x.reduce((s, v, i) => s + v * y[i]!, 0);
    };
    // "get" is common and "directory" rare: a text about getting a photo is nearer a photo than a directory.
    assert.ok(cos(['get', 'photo'], ['picture']) > cos(['get', 'photo'], ['directory']));
    assert.ok(cos(['get', 'directory'], ['folder']) > cos(['get', 'directory'], ['fetch']), 'the rare word leads');
    assert.equal(meaningOf(vectors, ['zzqx', 'the']), undefined);
    const entry = tool('read_graph', 'Read the entire knowledge graph. Returns every entity.', 's', 'Read graph');
    assert.deepEqual(toolMeaningWords(entry), ['read', 'graph', 'read', 'graph', 'read', 'the', 'entire', 'knowledge', 'graph']);
  });
});
