import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { rankTools, searchIndex, searchTools } from '../../src/catalog/search.js';
import { parseQuery } from '../../src/catalog/search-query.js';
import { buildBridge, DEFAULT_BRIDGE } from '../../src/catalog/search-bridge.js';
import { loadWordVectors, parseWordVectors, shippedVectors, vectorsPath } from '../../src/catalog/word-vectors.js';
import { createLogger } from '../../src/log.js';

function tool(name: string, description: string): FullEntry {
  return {
    name: `t__s__${name}`,
    toolbox_name: 't',
    source_server: 's',
    original_name: name,
    description: `[t/s] ${description}`,
    inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'What to look for.' } } },
  };
}

const TOOLS = [
  tool('find_doctor', 'Finds a doctor near an address.'),
  tool('book_flight', 'Books a flight between two airports.'),
  tool('send_message', 'Sends a message to a chat channel.'),
  tool('list_invoices', 'Lists the invoices of an account.'),
];

function capture(): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, log: createLogger({ level: 'debug', write: (line) => void lines.push(line) }) };
}

describe('English bridge (README "Search")', () => {
  it('leads a general-English word no tool uses to the tool that uses a word of the same meaning', () => {
    const indexes = [searchIndex(TOOLS)];
    assert.deepEqual(searchTools(indexes, 'physician', 5), [], 'no tool text has the word');
    const bridge = buildBridge(indexes);
    assert.ok(bridge.english, 'the shipped vectors load');
    assert.equal(searchTools(indexes, 'physician', 5, { bridge })[0]?.original_name, 'find_doctor');
    assert.equal(searchTools(indexes, 'a physician nearby', 5, { bridge })[0]?.original_name, 'find_doctor');
    // A word some tool has is matched as itself only (tools near it in meaning may follow it: see search-meaning).
    assert.deepEqual(
      rankTools(indexes, parseQuery('flight'), { bridge }).map((s) => s.entry.original_name),
      ['book_flight'],
    );
  });

  it('reads the shipped file once, with a word table of the most frequent English words', () => {
    const vectors = shippedVectors('english');
    assert.ok(vectors);
    assert.equal(shippedVectors('english'), vectors);
    assert.equal(vectors.dims, 100);
    assert.ok(vectors.rows.get('the') === 0 && vectors.rows.has('physician'));
  });

  it('degrades to lexical search with one log line when the file is missing or corrupt, never throwing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wb-english-'));
    try {
      const missing = capture();
      assert.equal(loadWordVectors(join(dir, 'none.bin'), 'english', missing.log), null);
      assert.equal(missing.lines.length, 1);
      assert.match(missing.lines[0]!, /warn: .*English word vectors could not be read.*search matches words only/);

      const real = await readFile(vectorsPath('english'));
      const cases = [Buffer.from('not vectors at all'), real.subarray(0, real.length - 7), Buffer.concat([Buffer.from('WBEV'), Buffer.alloc(40, 0xff)])];
      for (const [i, bytes] of cases.entries()) {
        const path = join(dir, `corrupt-${i}.bin`);
        await writeFile(path, bytes);
        const { lines, log } = capture();
        const vectors = loadWordVectors(path, 'english', log);
        assert.equal(vectors, null);
        assert.equal(lines.length, 1, `case ${i}: one line`);
        assert.match(lines[0]!, /not usable/);
        const indexes = [searchIndex(TOOLS)];
        const bridge = buildBridge(indexes, DEFAULT_BRIDGE, vectors);
        assert.equal(bridge.english, undefined);
        assert.deepEqual(searchTools(indexes, 'physician', 5, { bridge }), []);
        assert.equal(searchTools(indexes, 'doctor', 5, { bridge })[0]?.original_name, 'find_doctor');
      }
      assert.equal(parseWordVectors(new Uint8Array(0)).ok, false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
