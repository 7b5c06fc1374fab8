import { join } from 'node:path';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { DEFAULT_PARAMS, rankTools, searchIndex, type SearchIndex } from '../../src/catalog/search.js';
import { buildBridge } from '../../src/catalog/search-bridge.js';
import { parseQuery } from '../../src/catalog/search-query.js';
import { SemanticRanker } from '../../src/catalog/search-semantic.js';
import { createLogger } from '../../src/log.js';
import type { Ranker } from './baselines.js';
import type { CorpusFile } from './corpus.js';
import type { BenchQuery } from './queries.js';

/**
 * The workbench's search with the semantic ranker (README "Search", "Semantic ranker"), when
 * `SEARCH_EMBEDDINGS_URL` and `SEARCH_EMBEDDINGS_MODEL` (and `SEARCH_EMBEDDINGS_API_KEY` if the endpoint needs one)
 * name an endpoint. The semantic ranker is asynchronous; the benchmark's rankers are not: every query is ranked
 * first (scoped and global), then served from those answers. Tool vectors are kept in `.tmp/search-embeddings`, so a
 * second run embeds only the queries.
 */
export async function embeddingsRanker(
  env: Record<string, string | undefined>,
  files: readonly CorpusFile[],
  toolboxes: ReadonlyMap<string, FullEntry[]>,
  queries: readonly BenchQuery[],
): Promise<Ranker<SearchIndex> | undefined> {
  const url = env.SEARCH_EMBEDDINGS_URL;
  const model = env.SEARCH_EMBEDDINGS_MODEL;
  if (!url || !model) return undefined;
  const servers = new Map(files.map((f) => [`${f.server}/${f.server}`, f.description]));
  const prepared = new Map([...toolboxes].map(([name, entries]) => [name, searchIndex(entries, { servers })]));
  const all = [...prepared.values()];
  const bridge = buildBridge(all);
  const semantic = new SemanticRanker({
    config: { url, model, ...(env.SEARCH_EMBEDDINGS_API_KEY && { apiKey: env.SEARCH_EMBEDDINGS_API_KEY }) },
    dir: join(process.cwd(), '.tmp', 'search-embeddings'),
    log: createLogger({ level: 'warn' }),
    waitMs: 120_000,
  });
  const vectors = await Promise.all(all.map((index) => semantic.prepare(index)));
  // A row of lexical figures labelled as the semantic ranker's would mislead: stop (the warning above says why).
  if (vectors.some((v) => v === undefined)) throw new Error(`the embeddings endpoint ${url} gave no tool vectors`);
  const answers = new Map<string, FullEntry[]>();
  const keyOf = (indexes: readonly SearchIndex[], query: string): string => `${indexes.length === 1 ? indexes[0]!.docs[0]?.entry.toolbox_name : '*'}\n${query}`;
  for (const q of queries) {
    for (const indexes of [[prepared.get(q.server)!], all]) {
      const parsed = parseQuery(q.query);
      const fused = await semantic.rank(indexes, parsed, rankTools(indexes, parsed, { params: DEFAULT_PARAMS, bridge }), 20);
      // Lexical figures under the semantic ranker's name would mislead: stop.
      if (!fused) throw new Error(`the embeddings endpoint ${url} did not embed the query "${q.query}"`);
      answers.set(keyOf(indexes, q.query), fused);
    }
  }
  return {
    name: `workbench + embeddings (${model})`,
    prepare: (entries) => searchIndex(entries, { servers }),
    rank: (indexes, query, limit) => (answers.get(keyOf(indexes, query)) ?? []).slice(0, limit),
  };
}
