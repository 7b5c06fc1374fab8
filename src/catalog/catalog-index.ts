import type { Tool } from '@modelcontextprotocol/client';
import type { UnapprovedTool } from './trust.js';
import type { FailedServer } from '../clients/server-failure.js';

/** Characters an `open_toolbox` answer may take when nothing else is configured (README: "Context budget"). */
export const DEFAULT_CATALOG_BUDGET = 20_000;

/** One tool with everything its server declared (the `detail: "full"` entry of `open_toolbox`). */
export interface FullEntry {
  name: string;
  toolbox_name: string;
  source_server: string;
  original_name: string;
  title?: string;
  description: string;
  inputSchema: Tool['inputSchema'];
  outputSchema?: Tool['outputSchema'];
  annotations?: Tool['annotations'];
}

/** One tool of the compact index: enough to choose it and to call it with simple arguments. */
export interface IndexEntry {
  name: string;
  source_server: string;
  summary?: string;
  signature?: string;
}

/**
 * The densest index form: a server's tools by downstream name. A tool's canonical name is `prefix` + its name
 * (`{toolbox}__{server}__`, spelled out because a toolset or a search spans toolboxes).
 */
export interface IndexGroup {
  source_server: string;
  prefix: string;
  names: string[];
}

export type Detail = 'full' | 'index' | 'mixed';

/** The head of an answer: everything but `detail` and `tools`. */
export interface AnswerHead {
  toolbox: string;
  description: string;
  servers_connected: string[];
  /** Each with the message, its code, and what happened as fields (`failure`: kind, exit code, signal, HTTP status…). */
  servers_failed: FailedServer[];
  /** Servers shown from their last known tool list (the catalog cache) while they connect; absent when none. */
  servers_cached?: CachedServer[];
  /** What `servers_cached` means and what to do, once for the whole list (one sentence per state in it). */
  servers_cached_note?: string;
  /** Servers still starting when the answer was due; absent when none. */
  servers_pending?: PendingServer[];
  /** Connected servers whose tools shown are not all they listed, each with why; absent when none. */
  servers_partial?: PartialServer[];
  /** How tools this session was shown earlier have changed since; absent when nothing did. */
  catalog_changes?: CatalogChange[];
  /** Tools held until a person approves them (new or changed definitions, `toolChanges: "quarantine"`). */
  tools_held?: UnapprovedTool[];
  /** Tools whose definitions are not the approved ones but stay usable (`toolChanges: "warn"`). */
  tools_unapproved?: UnapprovedTool[];
}

/** A server whose list was cut short or had tools left out (README "Tool names and calls"): `note` says which. */
export interface PartialServer {
  server: string;
  note: string;
}

/**
 * A server shown from its last known list: when it was listed, how long ago, and its state — `fresh`: still fresh by
 * the server's own hint, nothing started; `checking`: being connected now to check the list; `unchecked`: not started,
 * because the answer is a search. `servers_cached_note` says what each state means, once per answer.
 */
export interface CachedServer {
  server: string;
  listed: string;
  age: string;
  state: 'fresh' | 'checking' | 'unchecked';
  /** Only on the entry that counts the servers an answer's budget left out: how many, and where each is named. */
  note?: string;
}

/** A server still starting: for how long, and what to do. */
export interface PendingServer {
  server: string;
  state: 'starting';
  seconds: number;
  note: string;
}

/** How a server's tools changed since a session was shown them. */
export interface CatalogChange {
  toolbox: string;
  server: string;
  added: string[];
  removed: string[];
  changed: string[];
  /** Only on the entry that counts the changes an answer's budget left out: how many, and when they are told. */
  note?: string;
}

export interface Answer extends AnswerHead {
  detail: Detail;
  tools: (FullEntry | IndexEntry | IndexGroup)[];
  /** How to get more (schemas, the next page): one sentence for the model. */
  hint?: string;
  /** Present when names alone overflow the budget: pass it back as `cursor` for the next page. */
  next_cursor?: string;
  /** Requested names that matched nothing, with the closest names. */
  /** Names that matched no enabled tool; `disabled` says why when the name is a tool that is disabled or held. */
  not_found?: { name: string; suggestions: string[]; disabled?: string }[];
}

/** An answer and its compact JSON text (exactly `JSON.stringify(result)`). */
export interface BudgetedAnswer {
  result: Answer;
  text: string;
  /** The toolbox cannot serve at all (every server failed): the answer is still the full report, as an error result. */
  isError?: boolean;
}

const INDEX_HINT =
  'This is a compact index (the full catalog exceeds the context budget): call open_toolbox with tools:[names] for their input schemas, or with query:"words" to search.';
/** A catalog with connected servers and no tool enabled. */
const NO_TOOLS_HINT =
  'No enabled tools: every tool of the connected servers is disabled (by the config, the project file, --disabled-tools, a toolset or the state file), or they list none. A person can see which and why with `mcp-workbench tools list`.';
/** The index was asked for (`detail: "index"`) of a catalog whose full form would have fit. */
const ASKED_INDEX_HINT =
  'This is the compact index you asked for (detail:"index"): call open_toolbox with tools:[names] for their input schemas, with query:"words" to search, or without detail for every schema (the full catalog fits the context budget).';
/** For detail and search answers (budgetMatches): the next step is fewer tools, or lifting the budget, not the same call. */
const MATCHES_HINT =
  'These matches do not all fit the context budget in full: those given as index entries carry no input schema. Call open_toolbox with fewer tools:[names] for their schemas, or add detail:"full" to lift the budget (a tool whose schema alone exceeds it comes in full only that way; ask for one such tool at a time, as clients may move an answer over 50,000 characters out of your context).';
const GROUPED_MATCHES_HINT =
  'Tool names only, by server (these matches exceed the context budget even as index entries); a tool\'s full name is its group\'s prefix followed by the name. Call open_toolbox with fewer tools:[names] for their input schemas.';
const NAMES_HINT = 'Tool names only (the catalog exceeds the context budget): call open_toolbox with tools:[names] for their input schemas, or with query:"words" to search.';
const GROUPED_HINT =
  'Tool names only, by server (the catalog exceeds the context budget); a tool\'s full name is its group\'s prefix followed by the name. Call open_toolbox with tools:[names] for their input schemas, or with query:"words" to search.';
const PAGE_HINT =
  'Tool names only, by server, one page at a time; a tool\'s full name is its group\'s prefix followed by the name. Call open_toolbox again with this cursor for the next page, with tools:[names] for input schemas, or with query:"words" to search.';

/** Summary caps tried in turn (characters); `0` drops the summary. Signatures are shortened, then dropped, after. */
const SUMMARY_CAPS = [160, 100, 60, 40, 24, 0];
const SIGNATURE_CAPS = [80, 40, 0];

/** The title, else the first sentence of the description (without the `[toolbox/server] ` prefix), on one line. */
export function summaryOf(entry: FullEntry): string {
  if (entry.title) return oneLine(entry.title);
  const text = oneLine(entry.description.replace(/^\[[^\]]*\]\s*/, ''));
  const end = text.search(/[.!?](\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

/** A parameter signature such as `url: string, width?: number` from an input schema's top-level properties. */
export function signatureOf(schema: Tool['inputSchema']): string {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(properties)
    .map(([key, value]) => `${key}${required.has(key) ? '' : '?'}: ${typeOf(value)}`)
    .join(', ');
}

function typeOf(schema: unknown, depth = 0): string {
  if (typeof schema !== 'object' || schema === null) return 'any';
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.length <= 4) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as unknown[] | undefined;
  if (union && depth < 2) return [...new Set(union.map((u) => typeOf(u, depth + 1)))].join(' | ');
  const type = Array.isArray(s.type) ? s.type.join(' | ') : typeof s.type === 'string' ? s.type : undefined;
  if (type === 'array' && depth < 2) return `${typeOf(s.items, depth + 1)}[]`;
  if (type === 'integer') return 'number';
  return type ?? 'any';
}

/** The index entry of a tool with its summary and signature shortened to the given caps (0 drops the field). */
export function indexEntry(entry: FullEntry, summaryCap = SUMMARY_CAPS[0]!, signatureCap = Infinity): IndexEntry {
  const summary = clip(summaryOf(entry), summaryCap);
  const signature = clip(signatureOf(entry.inputSchema), signatureCap);
  return {
    name: entry.name,
    source_server: entry.source_server,
    ...(summaryCap > 0 ? { summary } : {}),
    ...(signatureCap > 0 ? { signature } : {}),
  };
}

/**
 * A whole catalog under a budget of characters: the full entries when they fit (or when `detail` is `"full"`),
 * else the richest compact index that fits — summaries are shortened, then dropped, then signatures, and only then
 * are names paged (`cursor` is the offset a previous answer's `next_cursor` gave). The text never exceeds the
 * budget, except that a page always names at least one tool.
 */
export function budgetCatalog(
  head: AnswerHead,
  entries: readonly FullEntry[],
  options: { budget: number; detail?: 'full' | 'index'; cursor?: number },
): BudgetedAnswer {
  // Connected servers and not one tool to show: say why that may be, rather than an empty list alone.
  if (entries.length === 0 && head.servers_connected.length > 0) return render({ ...head, detail: 'full', tools: [], hint: NO_TOOLS_HINT });
  const full = render({ ...head, detail: 'full', tools: [...entries] });
  if (options.detail === 'full' || (options.detail === undefined && options.cursor === undefined && full.text.length <= options.budget)) {
    return full;
  }
  const start = Math.min(options.cursor ?? 0, entries.length);
  const rest = entries.slice(start);
  // A cursor at or past the end: no page is left, and the answer says so rather than listing nothing.
  if (start > 0 && rest.length === 0) return render({ ...head, detail: 'index', tools: [], hint: `No more tools: the cursor is past the last page (${entries.length} tools in all). Open the toolbox without a cursor to start over.` });
  if (start === 0) {
    const hint = full.text.length <= options.budget ? ASKED_INDEX_HINT : INDEX_HINT;
    for (const level of indexLevels()) {
      const tools = rest.map((e) => indexEntry(e, level.summary, level.signature));
      const answer = render({ ...head, detail: 'index', tools, hint });
      if (answer.text.length <= options.budget) return answer;
    }
  }
  return page(head, rest, start, options.budget);
}

/**
 * Entries in rank order under a budget: full entries while they fit, the rest as index entries (shortened the same
 * way as a catalog index). What does not fit even as a name is left out and counted in the hint.
 */
export function budgetMatches(head: AnswerHead, entries: readonly FullEntry[], budget: number, extra: Partial<Answer> = {}): BudgetedAnswer {
  const all = render({ ...head, detail: 'full', tools: [...entries], ...extra });
  if (all.text.length <= budget) return all;
  // What the budget did to the answer comes first; a hint of the caller's (a search's) follows it, never replaces it.
  const hinted = (own: string, keepExtra = true): Partial<Answer> => ({ ...extra, hint: keepExtra && extra.hint ? `${own} ${extra.hint}` : own });
  // Lengths are additive (entries joined by commas), so each (full prefix, index level) split is priced without
  // rendering: the most full entries first, then the richest index level for the rest.
  const n = entries.length;
  const skeleton = render({ ...head, detail: 'mixed', tools: [], ...hinted(MATCHES_HINT) }).text.length;
  const fullLength = prefixSums(entries.map((e) => JSON.stringify(e).length));
  const levels = [...indexLevels()].map((level) => {
    const tools = entries.map((e) => indexEntry(e, level.summary, level.signature));
    return { tools, length: prefixSums(tools.map((t) => JSON.stringify(t).length)) };
  });
  let best: BudgetedAnswer | undefined;
  for (let k = n - 1; k >= 0 && !best; k--) {
    for (const level of levels) {
      const total = skeleton + fullLength[k]! + (level.length[n]! - level.length[k]!) + Math.max(0, n - 1);
      if (total > budget) continue;
      const tools: (FullEntry | IndexEntry)[] = [...entries.slice(0, k), ...level.tools.slice(k)];
      best = render({ ...head, detail: k === 0 ? 'index' : 'mixed', tools, ...hinted(MATCHES_HINT) });
      break;
    }
  }
  if (best) return best;
  // Not even the names fit one by one: grouped by server they may (every match named, in rank order within a server).
  const grouped = render({ ...head, detail: 'index', tools: groupByServer(entries), ...hinted(GROUPED_MATCHES_HINT) });
  if (grouped.text.length <= budget) return grouped;
  // Still not: the most matches, in rank order, that fit grouped by server (room is kept for the hint), at least one.
  const leftHint = (left: number): string =>
    `${left} more match(es) did not fit the context budget, not even as names: ask for fewer — a narrower glob in tools:[...] or query:"words" — or open the toolbox without tools to page through every name (next_cursor).`;
  // The caller's hint goes first when even one match does not fit beside it (it may name matches left out).
  const keepExtra = render({ ...head, detail: 'index', tools: groupByServer(entries.slice(0, 1)), ...hinted(leftHint(entries.length - 1)) }).text.length <= budget;
  const fitting = (k: number): BudgetedAnswer =>
    render({ ...head, detail: 'index', tools: groupByServer(entries.slice(0, k)), ...hinted(leftHint(entries.length - k), keepExtra) });
  let low = 1;
  let high = entries.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fitting(mid).text.length <= budget) low = mid;
    else high = mid - 1;
  }
  return fitting(low);
}

function prefixSums(values: number[]): number[] {
  const sums = [0];
  for (const v of values) sums.push(sums.at(-1)! + v);
  return sums;
}

function* indexLevels(): Generator<{ summary: number; signature: number }> {
  for (const summary of SUMMARY_CAPS) yield { summary, signature: Infinity };
  for (const signature of SIGNATURE_CAPS) yield { summary: 0, signature };
}

/**
 * Names only, from `start`: first as canonical-name entries; when those overflow, as each server's bare tool names
 * (the densest form: a group's `prefix` + a name is the canonical name); when even those overflow, as many as fit
 * with a `next_cursor`.
 */
function page(head: AnswerHead, rest: readonly FullEntry[], start: number, budget: number): BudgetedAnswer {
  if (start === 0) {
    const names = rest.map((e) => ({ name: e.name, source_server: e.source_server }));
    const answer = render({ ...head, detail: 'index', tools: names, hint: NAMES_HINT });
    if (answer.text.length <= budget) return answer;
  }
  const grouped = (count: number, cursor?: string): BudgetedAnswer =>
    render({ ...head, detail: 'index', tools: groupByServer(rest.slice(0, count)), hint: cursor ? PAGE_HINT : GROUPED_HINT, ...(cursor ? { next_cursor: cursor } : {}) });
  const whole = grouped(rest.length);
  if (whole.text.length <= budget) return whole;
  // Room for the head, the hint and a cursor, then names until the budget is spent (a group costs its header too).
  let used = grouped(0, String(start + rest.length)).text.length;
  let count = 0;
  let server: string | undefined;
  for (const e of rest) {
    const cost = JSON.stringify(e.original_name).length + 1 + (e.source_server !== server ? JSON.stringify(e.source_server).length + 30 : 0);
    if (count > 0 && used + cost > budget) break;
    used += cost;
    server = e.source_server;
    count++;
  }
  let answer = count < rest.length ? grouped(count, String(start + count)) : grouped(count);
  while (answer.text.length > budget && count > 1) answer = grouped(--count, String(start + count)); // never over, whatever the estimate
  return answer;
}

/** Consecutive tools of one server as `{ source_server, prefix, names }` with their downstream names. */
function groupByServer(entries: readonly FullEntry[]): IndexGroup[] {
  const groups: IndexGroup[] = [];
  for (const e of entries) {
    const last = groups.at(-1);
    const prefix = e.name.slice(0, e.name.length - e.original_name.length);
    if (last?.prefix === prefix) last.names.push(e.original_name);
    else groups.push({ source_server: e.source_server, prefix, names: [e.original_name] });
  }
  return groups;
}

/** The answer with its fields in the documented order, and its text. */
function render(answer: Answer): BudgetedAnswer {
  const result: Answer = {
    toolbox: answer.toolbox,
    description: answer.description,
    servers_connected: answer.servers_connected,
    servers_failed: answer.servers_failed,
    ...(answer.servers_cached !== undefined ? { servers_cached: answer.servers_cached } : {}),
    ...(answer.servers_cached_note !== undefined ? { servers_cached_note: answer.servers_cached_note } : {}),
    ...(answer.servers_pending !== undefined ? { servers_pending: answer.servers_pending } : {}),
    ...(answer.servers_partial !== undefined ? { servers_partial: answer.servers_partial } : {}),
    ...(answer.catalog_changes !== undefined ? { catalog_changes: answer.catalog_changes } : {}),
    ...(answer.tools_held !== undefined ? { tools_held: answer.tools_held } : {}),
    ...(answer.tools_unapproved !== undefined ? { tools_unapproved: answer.tools_unapproved } : {}),
    detail: answer.detail,
    tools: answer.tools,
    ...(answer.hint !== undefined ? { hint: answer.hint } : {}),
    ...(answer.next_cursor !== undefined ? { next_cursor: answer.next_cursor } : {}),
    ...(answer.not_found !== undefined ? { not_found: answer.not_found } : {}),
  };
  return { result, text: JSON.stringify(result) };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function clip(text: string, cap: number): string {
  if (text.length <= cap) return text;
  return `${text.slice(0, Math.max(0, cap - 1)).trimEnd()}…`;
}
