import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { EmbeddingsConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { LogFields, Logger } from '../log.js';
import type { FullEntry } from './catalog-index.js';
import { allowed, byScore, EXACT_NAME, type Scored } from './search.js';
import { EMBED_BATCH, EmbeddingsFailure, embeddingsUrl, embedTexts, endpointHost } from './search-embeddings-client.js';
import type { SearchIndex } from './search-index.js';
import type { ParsedQuery } from './search-query.js';
import { words } from './search-text.js';
import { VectorStore } from './search-vectors.js';
import { within } from '../shared/within.js';

export interface SemanticOptions {
  config: EmbeddingsConfig;
  /** Where tool vectors are filed (the catalog cache's `embeddings` folder); none: kept in memory only. */
  dir?: string;
  /** Where the one line about an outage goes; it should redact the config's secrets. */
  log: Logger;
  /** Longest a search waits for the endpoint (the query's vector, and tool vectors not known yet). */
  waitMs?: number;
  /** Longest one request of tool texts may take (they are embedded in the background). */
  batchTimeoutMs?: number;
  /** After a failure, how long search stays lexical before the endpoint is asked again. */
  retryAfterMs?: number;
  /** The most bytes of tool vectors kept in memory across catalogs; default about 10,000 tools at 1,536 dimensions. */
  memoryBytes?: number;
}

export const DEFAULT_WAIT_MS = 1_500;
const DEFAULT_BATCH_TIMEOUT_MS = 30_000;
export const DEFAULT_RETRY_AFTER_MS = 60_000;

/** Reciprocal-rank fusion's constant: a tool's fused score is Σ 1 / (K + its rank) over the two rankings. */
export const RRF_K = 60;
/** How many of the nearest tools by meaning take part in the fusion. */
const DENSE_DEPTH = 50;
/** Characters of a tool's text that are embedded: its name, title and description say what it does. */
const TEXT_CHARS = 1_000;
/** Requests of tool texts under way at once (a global search prepares every toolbox; a local endpoint is one GPU). */
const MAX_BATCHES_IN_FLIGHT = 2;
const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;

type IndexVectors = readonly (Float32Array | undefined)[];

/**
 * The optional semantic ranker (README "Search", "Semantic ranker"): tool texts and queries are embedded by an
 * OpenAI-compatible endpoint, tool vectors are kept on disk by endpoint, model and catalog (so a restart embeds
 * nothing again), and the nearest tools by cosine are fused with the lexical ranking by reciprocal rank. A tool the
 * query names exactly stays first. When the endpoint fails in any way, search is lexical at once, the failure is
 * logged once (until the endpoint works again), and the endpoint is not asked again for `retryAfterMs`.
 * Never throws.
 */
export class SemanticRanker {
  /**
   * Tool vectors by hash of their text, bounded by bytes: a long-running server whose catalogs change keeps the recent
   * ones (an index's own vectors stay referenced by `prepared` while the index lives; an evicted one is read from its
   * file again, or embedded again).
   */
  private readonly known: LRUCache<string, Float32Array>;
  /** Keys of the vector files this process read or wrote. */
  private readonly filed = new Set<string>();
  private readonly prepared = new WeakMap<SearchIndex, Promise<IndexVectors | undefined>>();
  private readonly store: VectorStore;
  private readonly namespace: string;
  private downUntil = 0;
  private outage = false;
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly options: SemanticOptions) {
    this.known = new LRUCache({ maxSize: options.memoryBytes ?? DEFAULT_MEMORY_BYTES, sizeCalculation: (v) => Math.max(1, v.byteLength) });
    this.store = new VectorStore(options.dir, options.log);
    this.namespace = hash(`${embeddingsUrl(options.config.url)}\n${options.config.model}`);
  }

  /** Starts embedding an index's tools (from disk, else the endpoint) unless under way; resolves to their vectors. */
  prepare(index: SearchIndex): Promise<IndexVectors | undefined> {
    const have = this.prepared.get(index);
    if (have) return have;
    if (this.isDown()) return Promise.resolve(undefined);
    const vectors = this.embedIndex(index).catch((error: unknown) => {
      this.failed(error);
      this.prepared.delete(index);
      return undefined;
    });
    this.prepared.set(index, vectors);
    return vectors;
  }

  /**
   * The best `limit` tools for the query: the lexical ranking fused with the nearest tools by meaning; undefined when
   * the answer is to be lexical alone (no words, or the endpoint down or slower than `waitMs` for the query), so the
   * caller answers as without the ranker. Indexes whose tool vectors are not ready by then take part lexically only.
   */
  async rank(indexes: readonly SearchIndex[], parsed: ParsedQuery, lexical: readonly Scored[], limit: number): Promise<FullEntry[] | undefined> {
    const text = parsed.words.join(' ');
    if (text === '' || this.isDown()) return undefined;
    const waitMs = this.options.waitMs ?? DEFAULT_WAIT_MS;
    const deadline = Date.now() + waitMs;
    const preparing = indexes.map((index) => this.prepare(index));
    let query: Float32Array;
    try {
      [query] = (await embedTexts(this.options.config, [text], waitMs)) as [Float32Array];
    } catch (error) {
      this.failed(error);
      return undefined;
    }
    this.recovered();
    const vectors = await untilDeadline(preparing, deadline);
    const dense: Scored[] = [];
    indexes.forEach((index, i) => {
      const docVectors = vectors[i];
      if (!docVectors) return;
      index.docs.forEach((doc, d) => {
        const vector = docVectors[d];
        if (vector && vector.length === query.length && allowed(doc.entry, parsed)) dense.push({ entry: doc.entry, score: dot(query, vector) });
      });
    });
    return fuse(lexical, dense.sort(byScore).slice(0, DENSE_DEPTH), limit);
  }

  /** Waits for vector files being written (on shutdown). */
  flush(): Promise<void> {
    return this.store.flush();
  }

  private async embedIndex(index: SearchIndex): Promise<IndexVectors> {
    const texts = index.docs.map((doc) => toolText(doc.entry));
    const hashes = texts.map(hash);
    const key = hash(`${this.namespace}\n${hashes.join('\n')}`);
    // This index's vectors, held here so that none of them can be evicted from `known` before they are returned.
    const mine = new Map<string, Float32Array>();
    const take = (h: string, vector: Float32Array): void => {
      mine.set(h, vector);
      this.known.set(h, vector);
    };
    for (const h of hashes) {
      const vector = this.known.get(h);
      if (vector) mine.set(h, vector);
    }
    if (!this.filed.has(key) && hashes.some((h) => !mine.has(h))) {
      const disk = await this.store.read(key);
      for (const [h, vector] of disk ?? []) take(h, vector);
      if (disk) this.filed.add(key);
    }
    const missing = [...new Map(hashes.map((h, i) => [h, texts[i]!])).entries()].filter(([h]) => !mine.has(h));
    for (let start = 0; start < missing.length; start += EMBED_BATCH) {
      const batch = missing.slice(start, start + EMBED_BATCH);
      const got = await this.limited(() => {
        // The endpoint failed while this batch waited: give up quietly (that failure was said).
        if (this.isDown()) throw new EmbeddingsFailure('down', { reason: 'down' });
        return embedTexts(this.options.config, batch.map(([, t]) => t), this.options.batchTimeoutMs ?? DEFAULT_BATCH_TIMEOUT_MS);
      });
      batch.forEach(([h], i) => take(h, got[i]!));
    }
    if (!this.filed.has(key)) {
      this.filed.add(key);
      void this.store.write(key, this.options.config.model, new Map(hashes.map((h) => [h, mine.get(h)!])));
    }
    return hashes.map((h) => mine.get(h));
  }

  /** Runs a request of tool texts when fewer than MAX_BATCHES_IN_FLIGHT are under way (queries never wait for this). */
  private async limited<T>(run: () => Promise<T>): Promise<T> {
    while (this.inFlight >= MAX_BATCHES_IN_FLIGHT) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
    try {
      return await run();
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }

  private isDown(): boolean {
    return Date.now() < this.downUntil;
  }

  /** The endpoint failed: lexical search for a while, and one log line for the whole outage. */
  private failed(error: unknown): void {
    const retry = this.options.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
    // A batch given up because the endpoint went down meanwhile: already said.
    if (error instanceof EmbeddingsFailure && error.facts.reason === 'down') return;
    this.downUntil = Date.now() + retry;
    if (this.outage) return;
    this.outage = true;
    const what = error instanceof EmbeddingsFailure ? error.what : errorMessage(error);
    this.options.log.warn(
      `search embeddings at ${embeddingsUrl(this.options.config.url)} failed: ${what}. Search ranks by words only; the endpoint is asked again ` +
        `after ${Math.round(retry / 1000)} s (this is said once until it answers). Check that it serves model "${this.options.config.model}".`,
      outageFields(error, this.options.config, retry),
    );
  }

  private recovered(): void {
    if (!this.outage) return;
    this.outage = false;
    this.options.log.info(`search embeddings at ${embeddingsUrl(this.options.config.url)} answer again: search ranks by words and meaning`, {
      event: 'embeddings_up',
      endpoint: endpointHost(this.options.config.url),
    });
  }
}

/** The JSON log fields of an outage: the endpoint's host (never its key), the model, why, and when it is asked again. */
function outageFields(error: unknown, config: EmbeddingsConfig, retryMs: number): LogFields {
  const facts = error instanceof EmbeddingsFailure ? error.facts : undefined;
  return {
    event: 'embeddings_down',
    endpoint: endpointHost(config.url),
    model: config.model,
    reason: facts?.reason ?? 'error',
    ...(facts?.httpStatus !== undefined && { http_status: facts.httpStatus }),
    ...(facts?.errorCode !== undefined && { error_code: facts.errorCode }),
    retry_after_ms: retryMs,
  };
}

/** What is embedded of a tool: its name in words, its title and its description (without the `[toolbox/server] `). */
export function toolText(entry: FullEntry): string {
  const title = entry.title ?? entry.annotations?.title;
  const description = entry.description.replace(/^\[[^\]]*\]\s*/, '');
  return `${words(entry.original_name).join(' ')}${title ? `: ${title}` : ''}. ${description}`.slice(0, TEXT_CHARS);
}

/**
 * Reciprocal-rank fusion of the lexical and the dense rankings (README "Search"): each tool scores Σ 1 / (RRF_K +
 * rank) over the rankings it appears in; a tool the query names exactly stays first.
 */
export function fuse(lexical: readonly Scored[], dense: readonly Scored[], limit: number): FullEntry[] {
  const fused = new Map<FullEntry, Scored>();
  const add = (list: readonly Scored[]): void =>
    list.forEach((s, i) => {
      const have = fused.get(s.entry) ?? { entry: s.entry, score: s.score >= EXACT_NAME && list === lexical ? 1 : 0 };
      have.score += 1 / (RRF_K + i + 1);
      fused.set(s.entry, have);
    });
  add(lexical);
  add(dense);
  return [...fused.values()].sort(byScore).slice(0, limit).map((s) => s.entry);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/** Each promise's value, or undefined for those not settled by the deadline. */
async function untilDeadline<T>(promises: readonly Promise<T | undefined>[], deadline: number): Promise<(T | undefined)[]> {
  const out: (T | undefined)[] = promises.map(() => undefined);
  await within(Promise.all(promises.map(async (p, i) => void (out[i] = await p))), deadline - Date.now());
  return [...out];
}
