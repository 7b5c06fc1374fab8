import type { FullEntry } from './catalog-index.js';
import { allowed, type Scored } from './search.js';
import type { SearchIndex } from './search-index.js';
import { parseQuery } from './search-query.js';
import { words } from './search-text.js';
import { editDistance } from '../shared/edit-distance.js';

/**
 * For a query that matched nothing: the `limit` tools whose names look most like it (shared character trigrams of
 * the query and the tool's name and title), best first, topped up with the names nearest it by edit distance, so an
 * empty answer still names somewhere to go whenever there are tools at all.
 */
export function closestTools(indexes: readonly SearchIndex[], query: string, limit: number): FullEntry[] {
  const parsed = parseQuery(query);
  const text = parsed.words.join(' ');
  if (text === '') return [];
  const wanted = trigrams(text);
  const scored: Scored[] = [];
  const near: { entry: FullEntry; name: string }[] = [];
  for (const index of indexes) {
    for (const doc of index.docs) {
      if (!allowed(doc.entry, parsed)) continue;
      const name = words(doc.entry.original_name).join(' ');
      const have = trigrams(`${name} ${words(doc.entry.title ?? '').join(' ')}`);
      let shared = 0;
      for (const g of wanted) if (have.has(g)) shared++;
      if (shared > 0) scored.push({ entry: doc.entry, score: shared / Math.sqrt(wanted.size * have.size) });
      else near.push({ entry: doc.entry, name });
    }
  }
  const byName = (a: Scored, b: Scored): number => b.score - a.score || (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0);
  scored.sort(byName);
  if (scored.length < limit) {
    const distant = near.map(({ entry, name }) => ({ entry, score: -editDistance(text, name) }));
    scored.push(...distant.sort(byName).slice(0, limit - scored.length));
  }
  return scored.slice(0, limit).map((s) => s.entry);
}

function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.split(' ')) {
    const padded = ` ${w} `;
    for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3));
  }
  return out;
}
