import type { CachedList } from '../catalog/catalog-cache.js';
import type { AnswerHead, CachedServer } from '../catalog/catalog-index.js';
import type { UnapprovedTool } from '../catalog/trust.js';
import type { ToolboxCatalog } from '../catalog/toolbox-catalog.js';
import { firstOf, moreCount } from '../shared/first-of.js';
import { userOption } from '../state/pins.js';

/**
 * The parts of an `open_toolbox` answer's head that say how far to trust it (README "open_toolbox"): servers shown
 * from their last known list, and tools held or not approved. Pure functions of what discovery found.
 */

/** Most held or unapproved tools an answer names (the rest are counted). */
const MAX_UNAPPROVED_SHOWN = 20;

/**
 * The tools of these catalogs whose definitions are not the approved ones (README "Pinned tool definitions"): held
 * ones (use_tool refuses them) and flagged ones, each with why and what to do; absent when there are none.
 */
export function unapprovedHead(catalogs: readonly ToolboxCatalog[], member?: (name: string) => boolean): Pick<AnswerHead, 'tools_held' | 'tools_unapproved'> {
  const keep = (name: string): boolean => member === undefined || member(name);
  const held: UnapprovedTool[] = [];
  const flagged: UnapprovedTool[] = [];
  for (const catalog of catalogs) {
    for (const t of catalog.hidden) {
      if (t.visibility.source !== 'quarantine' || !keep(t.name)) continue;
      held.push({ name: t.name, change: t.visibility.rule as UnapprovedTool['change'], note: `${t.visibility.reason}; held until approved (mcp-workbench tools approve ${t.name}${userOption(t.visibility.user)})` });
    }
    for (const t of catalog.tools) {
      if (!t.unapproved || !keep(t.name)) continue;
      flagged.push({ name: t.name, change: t.unapproved.change, note: `${t.unapproved.reason}; usable, but check it before relying on it` });
    }
  }
  return { ...optional('tools_held', capped(held)), ...optional('tools_unapproved', capped(flagged)) };
}

function capped(list: UnapprovedTool[]): UnapprovedTool[] {
  return firstOf(list, MAX_UNAPPROVED_SHOWN, (left, first) => ({ name: moreCount(left), change: first.change, note: `${left} more tools like these; mcp-workbench tools list shows them all` }));
}

/** A head field only when it has something to say (answers without it stay as they were). */
export function optional<K extends string, T>(key: K, list: readonly T[]): { [P in K]?: T[] } {
  return (list.length > 0 ? { [key]: [...list] } : {}) as { [P in K]?: T[] };
}

/** A server shown from its last known list; `searching`: a search, which does not start it. */
export function cachedServer(server: string, list: CachedList, now: number, searching = false): CachedServer {
  return {
    server,
    listed: new Date(list.listedAt).toISOString(),
    age: formatAge(now - list.listedAt),
    state: (list.freshUntil ?? 0) > now ? 'fresh' : searching ? 'unchecked' : 'checking',
  };
}

const CACHED_STATES: Record<CachedServer['state'], string> = {
  fresh: 'fresh: still fresh by the server\'s own hint, so not started; a call connects it.',
  checking: 'checking: being connected now to check the list.',
  unchecked: 'unchecked: not started for a search; opening its toolbox without a query checks it.',
};

/**
 * `servers_cached` and, once for the whole list, what it means: a search across twenty cached servers says it once,
 * not twenty times. Nothing when the list is empty.
 */
export function cachedHead(list: readonly CachedServer[]): Pick<AnswerHead, 'servers_cached' | 'servers_cached_note'> {
  if (list.length === 0) return {};
  const states = (Object.keys(CACHED_STATES) as CachedServer['state'][]).filter((state) => list.some((c) => c.state === state));
  return {
    servers_cached: [...list],
    servers_cached_note: ['These servers\' tools are from their last known lists; calls always use the live server.', ...states.map((state) => CACHED_STATES[state])].join(' '),
  };
}

/** An age for people and models: "45 s", "12 min", "3 h", "2 d". */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 90) return `${min} min`;
  const h = Math.round(min / 60);
  return h < 48 ? `${h} h` : `${Math.round(h / 24)} d`;
}
