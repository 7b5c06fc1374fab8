import type { FailedServer } from '../clients/server-failure.js';
import type { AnswerHead, CachedServer, CatalogChange, PartialServer, PendingServer } from '../catalog/catalog-index.js';
import type { UnapprovedTool } from '../catalog/trust.js';
import { moreCount } from '../shared/first-of.js';

/**
 * The part of an `open_toolbox` answer's budget its head (every list in it: servers connected, failed, cached, pending
 * and partial, catalog changes, tools held or unapproved) may take: the tools are what the answer is for, so ten
 * servers that fail with long stderr, sixty shown from the cache, or a hundred whose lists changed never push them out.
 */
const HEAD_SHARE = 0.25;
/** A failure's message in a compacted head, and the stderr lines kept of it. */
const ERROR_CHARS = 300;
const STDERR_LINES = 2;
const STDERR_LINE_CHARS = 160;

/** Where every entry a bounded head counted away is told: the same call with detail:"full". */
const FULL = 'open_toolbox with detail:"full"';

/**
 * The head as it fits its share of `budget`: unchanged when it does; else each failure shortened (its message cut,
 * its stderr to the last lines, the note of a server still starting said once, a partial server's note cut), and if
 * that is not enough, only the first entries of each list (the most useful first: lists cached longest ago, changes
 * that removed or changed tools) with one entry counting the rest and naming where to see them all. The room is
 * shared out so that a short list stays whole and the long ones split what it leaves. An unbounded budget
 * (`detail: "full"`) keeps the head whole.
 */
export function boundedHead<H extends AnswerHead>(head: H, budget: number): H {
  if (!Number.isFinite(budget)) return head;
  const room = Math.floor(budget * HEAD_SHARE);
  if (size(head) <= room) return head;
  const compact: H = {
    ...head,
    servers_failed: head.servers_failed.map(shortFailure),
    ...(head.servers_pending && { servers_pending: head.servers_pending.map((p, i) => (i === 0 ? p : { ...p, note: 'still starting (as above)' })) }),
    ...(head.servers_partial && { servers_partial: head.servers_partial.map((p) => ({ ...p, note: shortError(p.note, ' (cut; detail:"full" gives it whole)') })) }),
  };
  if (size(compact) <= room) return compact;
  return sharedOut(compact, room);
}

/** A server's failure message cut to what an answer's head has room for, `after` the cut said. */
export function shortError(error: string, after = ''): string {
  return error.length > ERROR_CHARS ? `${error.slice(0, ERROR_CHARS)}…${after}` : error;
}

function shortFailure(failed: FailedServer): FailedServer {
  const error = shortError(failed.error, ' (cut; failure holds the facts)');
  const tail = failed.failure?.stderrTail;
  const failure = tail && failed.failure ? { ...failed.failure, stderrTail: tail.slice(-STDERR_LINES).map((l) => (l.length > STDERR_LINE_CHARS ? `${l.slice(0, STDERR_LINE_CHARS)}…` : l)) } : failed.failure;
  return { ...failed, error, ...(failure && { failure }) };
}

type ListKey = 'servers_connected' | 'servers_failed' | 'servers_cached' | 'servers_pending' | 'servers_partial' | 'catalog_changes' | 'tools_held' | 'tools_unapproved';
type Item<K extends ListKey> = NonNullable<AnswerHead[K]>[number];

/** One list of the head: its size as it stands, and the list cut to a room with one entry for the rest. */
interface Part {
  key: ListKey;
  size: number;
  fit: (room: number) => unknown[];
}

function part<K extends ListKey>(head: AnswerHead, key: K, rest: (left: readonly Item<K>[]) => Item<K>, order: (list: readonly Item<K>[]) => Item<K>[] = (l) => [...l]): Part | undefined {
  const list = head[key] as readonly Item<K>[] | undefined;
  if (!list || list.length === 0) return undefined;
  return { key, size: JSON.stringify(list).length, fit: (room) => fitted(order(list), room, rest) };
}

/**
 * Every list cut to a share of what `room` leaves once the rest of the head is counted: smallest first, each list
 * that fits its share kept whole, its unused share going to the lists after it.
 */
function sharedOut<H extends AnswerHead>(head: H, room: number): H {
  const parts = [
    part(head, 'servers_connected', (left) => `${moreCount(left.length).slice(0, -1)}; ${FULL} names each)`),
    part(head, 'servers_failed', restOfFailed),
    part(head, 'servers_cached', restOfCached, (list) => [...list].sort((a, b) => a.listed.localeCompare(b.listed))),
    part(head, 'servers_pending', (left): PendingServer => ({ server: moreCount(left.length), state: 'starting', seconds: left[0]!.seconds, note: `${left.length} more servers are still starting` })),
    part(head, 'servers_partial', restOfPartial),
    part(head, 'catalog_changes', restOfChanges, (list) => [...list].sort((a, b) => Number(onlyAdded(a)) - Number(onlyAdded(b)))),
    part(head, 'tools_held', restOfUnapproved),
    part(head, 'tools_unapproved', restOfUnapproved),
  ]
    .filter((p): p is Part => p !== undefined)
    .sort((a, b) => a.size - b.size);
  const emptied = Object.fromEntries(parts.map((p) => [p.key, []]));
  let free = room - size({ ...head, ...emptied });
  const cut: Record<string, unknown[]> = {};
  parts.forEach((p, i) => {
    const list = p.fit(Math.floor(free / (parts.length - i)));
    cut[p.key] = list;
    free -= JSON.stringify(list).length;
  });
  return { ...head, ...cut };
}

/**
 * The one entry that stands for the failed servers left out: how many failed how (by code), the code most of them
 * have, retryable when any is, and where each is told in full — the same call with detail:"full".
 */
function restOfFailed(left: readonly FailedServer[]): FailedServer {
  const codes = tally(left.map((f) => f.code));
  return {
    server: moreCount(left.length),
    error: `${left.length} more servers failed to connect (${codes.map(([code, n]) => `${code} ×${n}`).join(', ')}); ${FULL} lists each with its reason and fix (so does \`mcp-workbench doctor\`, for a person)`,
    code: codes[0]![0] as FailedServer['code'],
    retryable: left.some((f) => f.retryable),
  };
}

/** The one entry that stands for the partial servers left out: how many, and where each is told with its note. */
function restOfPartial(left: readonly PartialServer[]): PartialServer {
  return {
    server: moreCount(left.length),
    note: `${left.length} more servers list tools that are not all shown (a listing cut short, or tools left out); ${FULL} names each with why`,
  };
}

/** The cached servers left out: how many in which state, the oldest list among them, and where each is named. */
function restOfCached(left: readonly CachedServer[]): CachedServer {
  const states = tally(left.map((c) => c.state));
  return {
    server: moreCount(left.length),
    listed: left[0]!.listed,
    age: left[0]!.age,
    state: states[0]![0] as CachedServer['state'],
    note: `${left.length} more servers shown from their last known lists (${states.map(([state, n]) => `${state} ×${n}`).join(', ')}; listed and age are the oldest of them); ${FULL} names each with its age and state`,
  };
}

/**
 * The changes left out: how many servers, and when they are told — the session's next answer tells them again (the
 * workbench keeps them until they are shown), and detail:"full" tells them all at once.
 */
function restOfChanges(left: readonly CatalogChange[]): CatalogChange {
  const toolboxes = new Set(left.map((c) => c.toolbox));
  return {
    toolbox: toolboxes.size === 1 ? left[0]!.toolbox : '*',
    server: moreCount(left.length),
    added: [],
    removed: [],
    changed: [],
    note: `the tools of ${left.length} more servers changed (${left.filter((c) => !onlyAdded(c)).length} of them lost or changed tools); the next open_toolbox answer tells them, ${FULL} all at once`,
  };
}

function restOfUnapproved(left: readonly UnapprovedTool[]): UnapprovedTool {
  return { name: moreCount(left.length), change: left[0]!.change, note: `${left.length} more tools like these; mcp-workbench tools list shows them all (${FULL} names each)` };
}

/** A change that only added tools: less urgent than one that took away or changed a tool the model may call. */
function onlyAdded(change: CatalogChange): boolean {
  return change.removed.length === 0 && change.changed.length === 0;
}

/** How many of each value, most first. */
function tally(values: readonly string[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}

/**
 * The first entries of `list` that, with the one entry `rest` makes of those left out, fit `room` characters; at
 * least one entry is kept.
 */
function fitted<T>(list: readonly T[], room: number, rest: (left: readonly T[]) => T): T[] {
  if (JSON.stringify(list).length <= room) return [...list];
  let used = 1;
  let count = 0;
  while (count < list.length && used + JSON.stringify(list[count]).length + 1 <= room) used += JSON.stringify(list[count++]).length + 1;
  count = Math.max(1, count);
  const made = (n: number): T[] => [...list.slice(0, n), rest(list.slice(n))];
  while (count > 1 && JSON.stringify(made(count)).length > room) count--;
  return count >= list.length ? [...list] : made(count);
}

function size(head: AnswerHead): number {
  return JSON.stringify(head).length;
}
