import { join } from 'node:path';
import type { Answer, FullEntry } from '../catalog/catalog-index.js';
import { MAX_SEARCH_LIMIT, onlyQualifiers, rankTools, searchIndex, topUp, type Scored, type SearchContext, type SearchIndex } from '../catalog/search.js';
import { closestTools } from '../catalog/search-closest.js';
import { buildBridge, DEFAULT_BRIDGE, type Bridge } from '../catalog/search-bridge.js';
import { shippedVectors } from '../catalog/word-vectors.js';
import { parseQuery, type ParsedQuery } from '../catalog/search-query.js';
import { words } from '../catalog/search-text.js';
import { quoteClientText } from '../shared/client-text.js';
import { SemanticRanker } from '../catalog/search-semantic.js';
import { qualifierMiss } from './search-reach.js';
import type { WorkbenchConfig } from '../config/types.js';
import { redactingLogger, type Logger } from '../log.js';
import { createRedactor } from '../shared/redact.js';

export interface ToolSearchOptions {
  config: () => WorkbenchConfig;
  /** The catalog cache's directory: tool vectors go in its `embeddings` folder. None: vectors stay in memory. */
  cacheDir?: string;
  log?: Logger;
  /** How long a search waits for the embeddings endpoint (default: the ranker's). */
  embeddingsWaitMs?: number;
}

/**
 * What one scope's searches have seen (README "Search", "HTTP"): the last search index of each toolbox as that scope
 * was shown it — a client session's, or over modern HTTP one user's — from which the vocabulary bridge and the hints
 * of an answer that found nothing here are drawn. Each scope has its own, so a hint never names a tool another
 * session was shown (a tool its server added for that session, or listed for a client with other capabilities), and
 * one user's catalogs never shape another's ranking.
 */
export class SearchMemory {
  readonly known = new Map<string, SearchIndex>();
  bridgeMemo?: { from: SearchIndex[]; bridge: Bridge };
}

/**
 * open_toolbox's search (README "Search"): the search index of each toolbox as a scope last saw it (`SearchMemory`),
 * the vocabulary bridge learnt from them, the optional semantic ranker of the config in effect, and the hint an empty
 * answer carries.
 */
export class ToolSearch {
  private contextMemo?: { config: WorkbenchConfig; context: SearchContext };
  private semanticMemo?: { json: string; ranker: SemanticRanker | undefined };

  constructor(private readonly options: ToolSearchOptions) {}

  /** A toolbox's search index (built once per list of entries), remembered as that toolbox's latest in `memory`. */
  indexOf(memory: SearchMemory, toolbox: string | undefined, entries: readonly FullEntry[]): SearchIndex {
    const index = searchIndex(entries, this.searchContext());
    if (toolbox !== undefined) memory.known.set(toolbox, index);
    return index;
  }

  /**
   * Searches one view (README "Search"). A short answer is topped up with the tools nearest the query in meaning
   * (not when the semantic ranker answers: its dense ranking fills it). An answer is never empty-handed: when nothing
   * matches, the hint names the other toolboxes (as last seen; `others` first makes them searchable) where the query
   * does match, else the tools whose names look most like it; and the toolboxes to look in. Never throws for the
   * semantic ranker's sake. What other toolboxes hold is read from `memory`, the asking scope's own.
   */
  async search(
    memory: SearchMemory,
    toolbox: string | undefined,
    indexes: readonly SearchIndex[],
    query: string,
    limit: number,
    others?: () => Promise<void>,
  ): Promise<{ matches: FullEntry[]; extra: Partial<Answer> }> {
    const parsed = parseQuery(query);
    const miss = qualifierMiss(this.options.config().toolboxes, parsed, toolbox);
    if (miss) return { matches: [], extra: { hint: miss } };
    const lexical = rankTools(indexes, parsed, { bridge: this.bridge(memory) });
    const semantic = this.semantic();
    if (onlyQualifiers(parsed) && lexical.length > 0) {
      const next =
        limit < MAX_SEARCH_LIMIT
          ? `Ask with a higher limit (at most ${MAX_SEARCH_LIMIT}) or add words to rank them.`
          : 'Add words to rank them, or call open_toolbox without a query for the index of every tool of the toolbox.';
      const more = lexical.length > limit ? { hint: `${lexical.length} tools match ${parsed.qualifiers.join(' ')}; these are the first ${limit}. ${next}` } : {};
      return { matches: lexical.slice(0, limit).map((s) => s.entry), extra: more };
    }
    // Fused with the semantic ranker when it answers; else (off, down or slow) by words, topped up by meaning.
    const fused = semantic ? await semantic.rank(indexes, parsed, lexical, limit) : undefined;
    if (fused && fused.length > 0) return { matches: fused, extra: withUnnamed(parsed, fused, toolbox, {}) };
    if (!fused) {
      const shown = topUp(indexes, parsed, lexical, limit, { bridge: this.bridge(memory) });
      const matches = shown.map((s) => s.entry);
      if (shown.length > 0) return { matches, extra: withUnnamed(parsed, matches, toolbox, await this.looseHint(memory, toolbox, shown, parsed, others)) };
    }
    await others?.();
    const elsewhere = indexesBut(memory, toolbox);
    const written = this.whereItMatches(memory, elsewhere, parsed, 5, true);
    if (written) return { matches: [], extra: { hint: `No tool here matched the query. It matches in ${written}: open that toolbox with the same query.` } };
    // Elsewhere only through related words or near spellings: said so, so the model does not take it for a find.
    const loosely = this.whereItMatches(memory, elsewhere, parsed, 5, false);
    if (loosely) {
      return { matches: [], extra: { hint: `No tool here matched the query. Only related words or near spellings of it match in ${loosely}: open that toolbox with the same query to judge them, or try other words.` } };
    }
    const closest = closestTools(toolbox === undefined ? indexes : [...indexes, ...elsewhere], query, 5).map((e) => e.name);
    const names = closest.length > 0 ? ` Closest names: ${closest.join(', ')}.` : '';
    return {
      matches: [],
      extra: {
        hint:
          `No tool matched the query.${names}${this.toolboxesToLookIn(toolbox)} Try other words (a verb and an object, e.g. "take screenshot"), ` +
          'or open a toolbox without a query for its index.',
      },
    };
  }

  /**
   * What an answer with loose matches says (README "Search", "Only loose matches"): when no tool of it has a word of
   * the query as written (only related words, near spellings or meaning), that it is a guess, and where the query's
   * words are (other toolboxes as last seen; `others` first makes them known); when some of its tools came by meaning
   * alone, which.
   */
  private async looseHint(memory: SearchMemory, toolbox: string | undefined, shown: readonly Scored[], parsed: ParsedQuery, others?: () => Promise<void>): Promise<Partial<Answer>> {
    const byMeaning = shown.filter((s) => s.byMeaning).length;
    if (!shown.every((s) => s.loose)) {
      if (byMeaning === 0) return {};
      const names = shown.filter((s) => s.byMeaning).map((s) => s.entry.name);
      return { hint: `${names.join(', ')} ${byMeaning === 1 ? 'matches' : 'match'} no word of the query: ${byMeaning === 1 ? 'it is' : 'they are'} only near it in meaning.` };
    }
    if (toolbox !== undefined) await others?.();
    const elsewhere = toolbox === undefined ? [] : indexesBut(memory, toolbox);
    const written = this.whereItMatches(memory, elsewhere, parsed, 3, true);
    const where = written ? ` It matches as written in ${written}: open that toolbox with the same query.` : '';
    const what =
      byMeaning === shown.length
        ? `No tool ${toolbox === undefined ? '' : 'here '}has a word of the query: ${shown.length === 1 ? 'this is the tool' : 'these are the tools'} nearest to it in meaning, so check that one fits.`
        : 'None of these tools has a word of the query as written: they matched through related words, near spellings or meaning, so check that one fits.';
    return { hint: `${what}${where} Try the words a tool would use (a verb and an object, e.g. "take screenshot"), or open a toolbox without a query for its index.` };
  }

  /**
   * `toolbox "a" (a__s__x, a__s__y); toolbox "b" (b__s__z)`: the best `max` matches of the query in other toolboxes'
   * indexes (only those with a word of it as written when `asWritten`), by toolbox; empty when there are none.
   */
  private whereItMatches(memory: SearchMemory, elsewhere: readonly SearchIndex[], parsed: ParsedQuery, max: number, asWritten: boolean): string {
    const found = new Map<string, string[]>();
    for (const match of rankTools(elsewhere, parsed, { bridge: this.bridge(memory) }).filter((s) => !s.byMeaning && (!asWritten || !s.loose)).slice(0, max)) {
      found.set(match.entry.toolbox_name, [...(found.get(match.entry.toolbox_name) ?? []), match.entry.name]);
    }
    return [...found].map(([name, tools]) => `toolbox "${name}" (${tools.join(', ')})`).join('; ');
  }

  /** ` Toolboxes to look in: a (its description), b.` — every toolbox but the one searched; empty when there is none. */
  private toolboxesToLookIn(except: string | undefined): string {
    const toolboxes = this.options.config().toolboxes.filter((t) => t.name !== except);
    if (toolboxes.length === 0) return '';
    const named = toolboxes.slice(0, 10).map((t) => (t.description ? `${t.name} (${t.description.slice(0, 80)})` : t.name));
    const more = toolboxes.length > 10 ? `, and ${toolboxes.length - 10} more` : '';
    return ` ${except === undefined ? 'Toolboxes' : 'Other toolboxes'} to look in: ${named.join(', ')}${more}.`;
  }

  /** Waits for tool vectors being written (on shutdown). */
  async flush(): Promise<void> {
    await this.semanticMemo?.ranker?.flush();
  }

  /** Toolbox descriptions are indexed with their tools; one context object per config, so indexes are reused. */
  private searchContext(): SearchContext {
    const config = this.options.config();
    if (this.contextMemo?.config !== config) {
      this.contextMemo = { config, context: { toolboxes: new Map(config.toolboxes.map((t) => [t.name, t.description])) } };
    }
    return this.contextMemo.context;
  }

  /** The bridge learnt from every toolbox's latest index in `memory`, rebuilt only when one of them changed. */
  private bridge(memory: SearchMemory): Bridge {
    const from = [...memory.known.values()];
    const memo = memory.bridgeMemo;
    if (memo && memo.from.length === from.length && memo.from.every((index, i) => index === from[i])) return memo.bridge;
    const log = this.options.log?.child('search');
    memory.bridgeMemo = { from, bridge: buildBridge(from, DEFAULT_BRIDGE, shippedVectors('english', log), shippedVectors('domain', log)) };
    return memory.bridgeMemo.bridge;
  }

  /** The semantic ranker of the config in effect (made again only when `search.embeddings` changes); none when off. */
  private semantic(): SemanticRanker | undefined {
    const config = this.options.config();
    const embeddings = config.search?.embeddings;
    const json = JSON.stringify(embeddings ?? null);
    if (this.semanticMemo?.json === json) return this.semanticMemo.ranker;
    const log = this.options.log;
    const ranker =
      embeddings && log
        ? new SemanticRanker({
            config: embeddings,
            ...(this.options.cacheDir !== undefined && { dir: join(this.options.cacheDir, 'embeddings') }),
            log: redactingLogger(log.child('search'), createRedactor(config.secrets)),
            ...(this.options.embeddingsWaitMs !== undefined && { waitMs: this.options.embeddingsWaitMs }),
          })
        : undefined;
    this.semanticMemo = { json, ranker };
    return ranker;
  }
}

/**
 * `extra` with its hint led by what a quoted name the query spells, that no tool shown has, means: the tools shown only
 * share words with it (README "Search", names and qualifiers), so the model does not take one for the tool it named.
 */
function withUnnamed(parsed: ParsedQuery, matches: readonly FullEntry[], toolbox: string | undefined, extra: Partial<Answer>): Partial<Answer> {
  const key = (name: string): string => words(name).join('_');
  const missing = parsed.quoted.filter((q) => !matches.some((m) => [m.name, m.original_name].some((n) => n.toLowerCase() === q.toLowerCase() || key(n) === key(q))));
  if (missing.length === 0) return extra;
  const named = `No tool ${toolbox === undefined ? '' : 'here '}is named ${missing.map((q) => quoteClientText(q, 100)).join(' or ')}: these share words with it, so check that one fits.`;
  return { ...extra, hint: extra.hint ? `${named} ${extra.hint}` : named };
}

/** The latest index in `memory` of every toolbox but `toolbox`. */
function indexesBut(memory: SearchMemory, toolbox: string | undefined): SearchIndex[] {
  return [...memory.known].filter(([name]) => name !== toolbox).map(([, index]) => index);
}
