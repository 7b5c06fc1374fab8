import MiniSearch from 'minisearch';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { terms, words } from '../../src/catalog/search-text.js';

/** A ranker of the benchmark: prepare once per toolbox, then rank over one or several prepared toolboxes. */
export interface Ranker<I> {
  name: string;
  prepare(entries: readonly FullEntry[]): I;
  rank(indexes: readonly I[], query: string, limit: number): FullEntry[];
}

function docText(e: FullEntry): string {
  const properties = (e.inputSchema.properties ?? {}) as Record<string, { description?: unknown }>;
  const params = Object.entries(properties).map(([k, v]) => `${k} ${typeof v?.description === 'string' ? v.description : ''}`);
  return [words(e.original_name).join(' '), e.title ?? '', e.description.replace(/^\[[^\]]*\]\s*/, ''), ...params].join(' ');
}

interface PlainIndex {
  docs: { entry: FullEntry; tf: Map<string, number>; len: number }[];
  df: Map<string, number>;
  total: number;
}

/**
 * Plain BM25 (k1 1.2, b 0.75) over one bag of words per tool (name words, title, description, parameter names and
 * descriptions), with the same Porter stems and stop words as the workbench: the textbook baseline.
 */
export const plainBm25: Ranker<PlainIndex> = {
  name: 'plain BM25',
  prepare(entries) {
    const df = new Map<string, number>();
    let total = 0;
    const docs = entries.map((entry) => {
      const tf = new Map<string, number>();
      const ts = terms(docText(entry));
      for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
      total += ts.length;
      return { entry, tf, len: ts.length };
    });
    return { docs, df, total };
  },
  rank(indexes, query, limit) {
    const q = [...new Set(terms(query))];
    const n = indexes.reduce((s, i) => s + i.docs.length, 0);
    const avg = indexes.reduce((s, i) => s + i.total, 0) / Math.max(1, n);
    const idf = new Map(q.map((t) => {
      const d = indexes.reduce((s, i) => s + (i.df.get(t) ?? 0), 0);
      return [t, Math.log(1 + (n - d + 0.5) / (d + 0.5))];
    }));
    const scored: { entry: FullEntry; score: number }[] = [];
    for (const index of indexes) {
      for (const doc of index.docs) {
        let score = 0;
        for (const t of q) {
          const tf = doc.tf.get(t);
          if (tf) score += idf.get(t)! * ((tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * doc.len) / avg)));
        }
        if (score > 0) scored.push({ entry: doc.entry, score });
      }
    }
    scored.sort((a, b) => b.score - a.score || (a.entry.name < b.entry.name ? -1 : 1));
    return scored.slice(0, limit).map((s) => s.entry);
  },
};

/**
 * MiniSearch 7 (BM25+ over fields, prefix and fuzzy matching built in), given the same fields, stems and stop words,
 * name boosted: the maintained library weighed against our own BM25F. Several toolboxes are searched as one
 * MiniSearch over their union, built per call (its statistics cannot be combined across instances).
 */
export const miniSearch: Ranker<{ entries: readonly FullEntry[]; search: MiniSearch }> = {
  name: 'MiniSearch',
  prepare(entries) {
    return { entries, search: build(entries) };
  },
  rank(indexes, query, limit) {
    const search = indexes.length === 1 ? indexes[0]!.search : build(indexes.flatMap((i) => i.entries));
    const byId = new Map(indexes.flatMap((i) => i.entries.map((e) => [e.name, e] as const)));
    return search
      .search(query, { prefix: (_t, i, all) => i === all.length - 1, fuzzy: (t) => (t.length >= 5 ? 0.2 : false), combineWith: 'OR' })
      .slice(0, limit)
      .map((r) => byId.get(r.id as string)!);
  },
};

function build(entries: readonly FullEntry[]): MiniSearch {
  const search = new MiniSearch<{ id: string; name: string; title: string; description: string; params: string }>({
    fields: ['name', 'title', 'description', 'params'],
    tokenize: (text) => words(text),
    processTerm: (term) => terms(term)[0] ?? null,
    searchOptions: { boost: { name: 4, title: 2, params: 0.7 } },
  });
  search.addAll(
    entries.map((e) => {
      const properties = (e.inputSchema.properties ?? {}) as Record<string, { description?: unknown }>;
      return {
        id: e.name,
        name: e.original_name,
        title: e.title ?? '',
        description: e.description.replace(/^\[[^\]]*\]\s*/, ''),
        params: Object.entries(properties).map(([k, v]) => `${k} ${typeof v?.description === 'string' ? v.description : ''}`).join(' '),
      };
    }),
  );
  return search;
}
