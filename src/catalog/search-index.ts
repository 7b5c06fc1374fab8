import type { FullEntry } from './catalog-index.js';
import { analyze, forgetWordsIfMany, wordCount, wordOf, words } from './search-text.js';

/**
 * The search index of a list of tools (README "Search"): its shapes, and how it is built. Ranking is in search.ts and
 * the vocabulary bridge in search-bridge.ts; both read these shapes, so neither imports the other.
 */

export interface Doc {
  entry: FullEntry;
  /** The name's words joined by `_`, and the name itself lower-cased, for exact-name matches. */
  bare: string;
  names: readonly string[];
  nameTerms: ReadonlySet<string>;
  /**
   * For a tool its server marks destructive (`annotations.destructiveHint: true`): the term of its name's first word,
   * the action it takes (`drop` of drop-database). A query that does not name it ranks the tool a little lower.
   */
  action?: string;
  /** Words in each field (F numbers). */
  lengths: readonly number[];
}

/**
 * Per term: the docs it occurs in and, for each, its count in every field, packed into one number (six bits a field,
 * counts capped at 63: far beyond where BM25 saturates); read a field's count with {@link fieldCount}. Views of the
 * index's postings arrays (see {@link postingsOf}).
 */
export interface Postings {
  docs: Int32Array;
  tf: Float64Array;
}

/** Bits of a packed term count given to each field. */
const FIELD_BITS = 64;
const MAX_COUNT = FIELD_BITS - 1;
/** The place value of each field in a packed count: 64^field (8 fields: 48 bits, exact in a double). */
export const FIELD_PLACE: readonly number[] = Array.from({ length: 8 }, (_, f) => FIELD_BITS ** f);

/** A term's count in one field of a doc, from its packed counts. */
export function fieldCount(packed: number, field: number): number {
  return Math.floor(packed / FIELD_PLACE[field]!) % FIELD_BITS;
}

/** A term's postings in an index (views, no copy), or undefined when no tool has it. */
export function postingsOf(index: SearchIndex, term: string): Postings | undefined {
  const t = index.postings.get(term);
  if (t === undefined) return undefined;
  const from = index.starts[t]!;
  const to = index.starts[t + 1]!;
  return { docs: index.postingDocs.subarray(from, to), tf: index.postingTf.subarray(from, to) };
}

/** A list of tools prepared for search once; reuse it for as long as the list stays the same. */
export interface SearchIndex {
  docs: Doc[];
  /**
   * Per term, its number: its postings are at `starts[t]` up to `starts[t + 1]` in `postingDocs` (docs ascending) and
   * `postingTf` (packed counts). Three arrays for the whole index instead of two per term: building them allocates
   * next to nothing.
   */
  postings: Map<string, number>;
  starts: Int32Array;
  postingDocs: Int32Array;
  postingTf: Float64Array;
  /** Summed field lengths, for the average length that normalises each field. */
  totals: Float64Array;
  /** Every surface word seen (stop words aside), with its stem: for prefix and typo matches. */
  vocabulary: Map<string, string>;
}

/** Descriptions of where tools live, indexed with them: by toolbox name, and by `toolbox/server`. */
export interface SearchContext {
  toolboxes?: ReadonlyMap<string, string>;
  servers?: ReadonlyMap<string, string>;
}

/** Number of fields (search.ts FIELDS: name, title, summary, description, parameters, parameterText, server, toolbox). */
const F = 8;

const built = new WeakMap<readonly FullEntry[], { context: SearchContext | undefined; index: SearchIndex }>();

/**
 * The search index of a list of tools, built once per list object (and context). Building costs one pass over each
 * tool's texts; texts seen before (a catalog that changed in a few tools) are not analysed again (see analyze).
 */
export function searchIndex(entries: readonly FullEntry[], context?: SearchContext): SearchIndex {
  const cached = built.get(entries);
  if (cached && cached.context === context) return cached.index;
  forgetWordsIfMany();
  const index: SearchIndex = { docs: [], postings: new Map(), starts: NONE, postingDocs: NONE, postingTf: NO_TF, totals: new Float64Array(F), vocabulary: new Map() };
  scratch.startBuild();
  for (const entry of entries) addDoc(index, entry, context, scratch);
  scratch.endBuild(index);
  built.set(entries, { context, index });
  return index;
}

/**
 * One doc's term counts per field, which words the index's vocabulary has, and the build's (term, doc) rows, in
 * arrays indexed by word number (see wordId) and reused from doc to doc and build to build: no map lookup or
 * allocation per word, and each term's postings made once at their final size. Builds run one at a time (JavaScript
 * is single-threaded and a build never awaits).
 */
class Scratch {
  /** Per word number: the doc that last counted it (`doc`), and its place in that doc's `ids`. */
  private docOf = new Int32Array(1024).fill(-1);
  private place = new Int32Array(1024);
  /** Per word number: the build whose vocabulary has it. */
  private builtIn = new Int32Array(1024);
  /** Per word number: the build that counted it, and in how many of that build's docs. */
  private countedIn = new Int32Array(1024);
  private docsWith = new Int32Array(1024);
  /** The word numbers of this doc's terms, in the order first counted. */
  readonly ids: number[] = [];
  /** The terms this build counted, in the order first met. */
  private readonly terms: number[] = [];
  /** One row per (term, doc) of this build, in doc order: the term's number, the doc, the packed counts. */
  private rowTerm = new Int32Array(1 << 14);
  private rowDoc = new Int32Array(1 << 14);
  private rowTf = new Float64Array(1 << 14);
  private rows = 0;
  counts = new Uint32Array(64 * F);
  doc = 0;
  build = 0;

  startBuild(): void {
    this.build++;
    this.rows = 0;
    this.terms.length = 0;
  }

  startDoc(): void {
    this.doc++;
    this.ids.length = 0;
    if (this.docOf.length < wordCount()) this.grow(wordCount());
  }

  /** Whether the vocabulary of this build already has the word; marks it as had. */
  inVocabulary(id: number): boolean {
    if (this.builtIn[id] === this.build) return true;
    this.builtIn[id] = this.build;
    return false;
  }

  add(id: number, field: number): void {
    let at: number;
    if (this.docOf[id] === this.doc) at = this.place[id]!;
    else {
      at = this.ids.length;
      this.docOf[id] = this.doc;
      this.place[id] = at;
      this.ids.push(id);
      if ((at + 1) * F > this.counts.length) this.counts = grown(this.counts, new Uint32Array(this.counts.length * 2));
      for (let f = at * F; f < at * F + F; f++) this.counts[f] = 0;
    }
    this.counts[at * F + field]! += 1;
  }

  /** Records that the term at place `k` of this doc occurs in doc `doc` with these packed counts. */
  row(k: number, doc: number, packed: number): void {
    const id = this.ids[k]!;
    if (this.countedIn[id] !== this.build) {
      this.countedIn[id] = this.build;
      this.docsWith[id] = 0;
      this.terms.push(id);
    }
    this.docsWith[id]!++;
    if (this.rows === this.rowTerm.length) {
      const size = this.rows * 2;
      this.rowTerm = grown(this.rowTerm, new Int32Array(size));
      this.rowDoc = grown(this.rowDoc, new Int32Array(size));
      this.rowTf = grown(this.rowTf, new Float64Array(size));
    }
    this.rowTerm[this.rows] = id;
    this.rowDoc[this.rows] = doc;
    this.rowTf[this.rows++] = packed;
  }

  /**
   * Writes this build's postings: each term's rows side by side (docs ascending, as the rows came), counted first so
   * every array is made once at its final size. `place` then serves as each term's fill position (a doc reads it only
   * for words it counted, so it is free between builds).
   */
  endBuild(index: SearchIndex): void {
    const n = this.terms.length;
    const starts = new Int32Array(n + 1);
    const fill = this.place;
    let at = 0;
    for (let t = 0; t < n; t++) {
      const id = this.terms[t]!;
      starts[t] = at;
      fill[id] = at;
      at += this.docsWith[id]!;
      index.postings.set(wordOf(id), t);
    }
    starts[n] = at;
    const docs = new Int32Array(at);
    const tf = new Float64Array(at);
    for (let r = 0; r < this.rows; r++) {
      const k = fill[this.rowTerm[r]!]!++;
      docs[k] = this.rowDoc[r]!;
      tf[k] = this.rowTf[r]!;
    }
    Object.assign(index, { starts, postingDocs: docs, postingTf: tf });
  }

  /** Room for every word number below `size` (texts analysed during a doc get new numbers). */
  grow(size: number): void {
    let length = this.docOf.length;
    while (length < size) length *= 2;
    if (length === this.docOf.length) return;
    const docOf = new Int32Array(length).fill(-1);
    docOf.set(this.docOf);
    this.docOf = docOf;
    this.place = grown(this.place, new Int32Array(length));
    this.builtIn = grown(this.builtIn, new Int32Array(length));
    this.countedIn = grown(this.countedIn, new Int32Array(length));
    this.docsWith = grown(this.docsWith, new Int32Array(length));
  }
}

/** `into` with `from` copied to its start. */
function grown<T extends Int32Array | Uint32Array | Float64Array>(from: T, into: T): T {
  into.set(from as never);
  return into;
}

const scratch = new Scratch();

const NONE = new Int32Array(0);
const NO_TF = new Float64Array(0);

/** Counts one text's terms into the doc being built, in `field`; adds its new words to the vocabulary. */
function addText(index: SearchIndex, doc: Scratch, lengths: number[], field: number, text: string | undefined): Int32Array {
  if (!text) return NONE;
  const pairs = analyze(text);
  doc.grow(wordCount());
  for (let i = 0; i < pairs.length; i += 2) {
    if (!doc.inVocabulary(pairs[i]!)) index.vocabulary.set(wordOf(pairs[i]!), wordOf(pairs[i + 1]!));
    doc.add(pairs[i + 1]!, field);
  }
  lengths[field]! += pairs.length / 2;
  return pairs;
}

function addDoc(index: SearchIndex, entry: FullEntry, context: SearchContext | undefined, doc: Scratch): void {
  const id = index.docs.length;
  const lengths = [0, 0, 0, 0, 0, 0, 0, 0];
  doc.startDoc();
  const name = addText(index, doc, lengths, 0, entry.original_name);
  const nameTerms = new Set<string>();
  for (let i = 1; i < name.length; i += 2) nameTerms.add(wordOf(name[i]!));
  addText(index, doc, lengths, 1, entry.title ?? entry.annotations?.title);
  const description = withoutLabel(entry.description);
  const cut = firstSentenceEnd(description);
  addText(index, doc, lengths, 2, description.slice(0, cut));
  addText(index, doc, lengths, 3, description.slice(cut));
  const properties = (entry.inputSchema.properties ?? {}) as Record<string, unknown>;
  for (const key in properties) {
    addText(index, doc, lengths, 4, key);
    const value = properties[key];
    if (value === null || typeof value !== 'object') continue;
    const { description: about, enum: values } = value as { description?: unknown; enum?: unknown };
    if (typeof about === 'string') addText(index, doc, lengths, 5, about);
    if (Array.isArray(values)) addText(index, doc, lengths, 5, values.filter((v) => typeof v === 'string').join(' '));
  }
  addText(index, doc, lengths, 6, entry.source_server);
  addText(index, doc, lengths, 6, context?.servers?.get(`${entry.toolbox_name}/${entry.source_server}`));
  addText(index, doc, lengths, 7, entry.toolbox_name);
  addText(index, doc, lengths, 7, context?.toolboxes?.get(entry.toolbox_name));
  const { ids, counts } = doc;
  for (let k = 0; k < ids.length; k++) {
    let packed = 0;
    for (let f = 0; f < F; f++) {
      const c = counts[k * F + f]!;
      if (c > 0) packed += Math.min(c, MAX_COUNT) * FIELD_PLACE[f]!;
    }
    doc.row(k, id, packed);
  }
  for (let f = 0; f < F; f++) index.totals[f]! += lengths[f]!;
  const names = [entry.original_name.toLowerCase(), entry.name.toLowerCase()];
  const action = entry.annotations?.destructiveHint === true && name.length >= 2 ? wordOf(name[1]!) : undefined;
  index.docs.push({ entry, bare: words(entry.original_name).join('_'), names, nameTerms, lengths, ...(action !== undefined && { action }) });
}

/** A description without the `[toolbox/server] ` label the workbench puts before it (see core/tool-entry.ts). */
export function withoutLabel(description: string): string {
  if (description.charCodeAt(0) !== 91) return description;
  const close = description.indexOf(']');
  return close < 0 ? description : description.slice(close + 1).trimStart();
}

/** Where a description's first sentence ends: the first ". " / newline after some words, or the whole text. */
export function firstSentenceEnd(text: string): number {
  const m = /[.!?](\s|$)|\n/.exec(text.slice(20));
  return m ? 20 + m.index + 1 : text.length;
}
