import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { corpusEntries, loadCorpus } from '../../bench/search/corpus.js';
import { searchIndex, type SearchIndex } from '../../src/catalog/search.js';
import { wordsBegunBy, wordsNear } from '../../src/catalog/search-lexicon.js';
import { boundedEditDistance } from '../../src/shared/edit-distance.js';

// The whole frozen corpus of the search benchmark in one index: 883 real tools, some 5,000 words.
const index = searchIndex([...corpusEntries(loadCorpus()).values()].flat());

/** What a scan of the whole vocabulary answers, in its order: the behaviour the lexicon must keep. */
function scan(index: SearchIndex, keep: (surface: string) => boolean): string[] {
  const out: string[] = [];
  for (const [surface, term] of index.vocabulary) if (term && keep(surface)) out.push(surface);
  return out;
}

/** Typos of a word, made the four ways a person makes them: a letter dropped, added, changed, or two swapped. */
function typos(word: string, seed: number): string[] {
  const k = 1 + (seed % Math.max(1, word.length - 2));
  return [
    word.slice(0, k) + word.slice(k + 1),
    word.slice(0, k) + 'q' + word.slice(k),
    word.slice(0, k) + 'z' + word.slice(k + 1),
    word.slice(0, k) + (word[k + 1] ?? '') + word[k] + word.slice(k + 2),
    word.slice(0, k) + 'xj' + word.slice(k + 2),
  ];
}

describe('search lexicon: prefix and near-spelling lookups', () => {
  const vocabulary = [...index.vocabulary.keys()];

  it('finds the words a prefix begins exactly as a scan does, in the vocabulary order', () => {
    assert.ok(vocabulary.length > 3000, `the corpus has a real vocabulary (${vocabulary.length} words)`);
    const prefixes = new Set<string>();
    for (const word of vocabulary) for (let n = 2; n <= Math.min(5, word.length); n++) prefixes.add(word.slice(0, n));
    for (const prefix of [...prefixes, 'zz', 'qx', 'a1', '9z', 'd', 'z', '']) {
      const expected = scan(index, (s) => s.length > prefix.length && s.startsWith(prefix));
      assert.deepEqual(wordsBegunBy(index, prefix).map((w) => w.surface), expected, prefix);
    }
  });

  it('finds the words within one or two edits exactly as a scan does, in the vocabulary order', () => {
    let found = 0;
    for (const [i, word] of vocabulary.entries()) {
      if (i % 7 !== 0 || word.length < 4) continue;
      for (const typo of typos(word, i)) {
        const max = typo.length >= 8 ? 2 : 1;
        const expected = scan(index, (s) => Math.abs(s.length - typo.length) <= max && boundedEditDistance(typo, s, max) <= max);
        const got = wordsNear(index, typo, max).map((w) => w.surface);
        assert.deepEqual(got, expected, typo);
        found += got.length;
      }
    }
    assert.ok(found > 1000, `the typos reach real words (${found})`);
  });

  it('finds a very long word a letter away (letter counts past 255 stop there, and never rule out a word in reach)', () => {
    const long = searchIndex([{ ...[...corpusEntries(loadCorpus()).values()][0]![0]!, description: `${'a'.repeat(256)} tool` }]);
    // 256 of one letter against 255: one edit apart, though a count kept in a byte would wrap to 0.
    assert.deepEqual(wordsNear(long, 'a'.repeat(255), 2).map((w) => w.surface.length), [256]);
    assert.deepEqual(wordsNear(long, `${'a'.repeat(254)}bb`, 2).map((w) => w.surface.length), [256]);
  });

  it('gives each word its stem', () => {
    for (const w of wordsBegunBy(index, 'dele')) assert.equal(w.term, index.vocabulary.get(w.surface));
    for (const w of wordsNear(index, 'deleet', 1)) assert.equal(w.term, index.vocabulary.get(w.surface));
  });
});
