import type { Tool } from '@modelcontextprotocol/client';
import { ToolboxCatalog, type ToolLookup } from '../catalog/toolbox-catalog.js';
import type { VisibilityPolicy } from '../catalog/visibility.js';
import type { ServerConfig, ToolboxConfig } from '../config/types.js';
import type { SlotStatus } from '../clients/server-slot.js';
import { within } from '../shared/within.js';
import type { HungBefore, NameSite, WaitedName } from './name-wait-answers.js';
import type { CachedCatalog, Scope } from './scope.js';

/**
 * `use_tool` with a bare or loose name (`echo`, not `dev__fx__echo`) while some server of the toolbox (or toolset) is
 * not up: the name is unique only across all of its servers, so they are waited for — within bounds, and never for a
 * name a last known list already answers (README "Tool names and calls", "Toolsets").
 */

/** What the wait needs from the workbench (use-tool.ts UseToolHost has it all). */
export interface NameWaitHost {
  policy(): VisibilityPolicy;
  cachedCatalog(scope: Scope, toolbox: string): CachedCatalog;
  openWait(toolbox: string): number;
  useToolWait(toolbox: string): number;
  lastKnownTools(scope: Scope, toolbox: string, server: ServerConfig): Promise<readonly Tool[] | undefined>;
}

/**
 * A bare or loose name looked up across the whole toolbox. A name that the servers' tools as last known (live, else
 * the catalog cache) show as a disabled tool is that, at once: nothing is started or waited for it, as for its full
 * name. Otherwise the servers are waited for as waitForName says.
 */
export async function lookupAcrossToolbox(host: NameWaitHost, scope: Scope, toolbox: ToolboxConfig, toolName: string): Promise<WaitedName<ToolLookup>> {
  const lists = await knownLists(host, scope, toolbox);
  const known = lastKnownLookup(host, toolbox.name, lists, toolName);
  if (known && 'hidden' in known) return { lookup: known, starting: [], unlisted: [], again: [] };
  return waitForName(host, scope, toolbox.servers.map((server) => ({ toolbox: toolbox.name, server: server.name })), {
    find: () => host.cachedCatalog(scope, toolbox.name).catalog.find(toolName),
    notFound: (lookup) => 'notFound' in lookup,
    listHas: ({ server }) => {
      const tools = lists.get(server);
      return tools && !('notFound' in new ToolboxCatalog(toolbox.name, [{ server, tools }], host.policy()).find(toolName));
    },
  });
}

/** How a name is judged while its servers start (see waitForName). */
export interface NameJudge<Lookup> {
  /** The name looked up among the servers that are up now. */
  find(): Lookup;
  /** Whether that lookup found nothing (not even a disabled or ambiguous name). */
  notFound(lookup: Lookup): boolean;
  /** Whether a server's last known list (live, else the catalog cache) has the name; undefined: never known. */
  listHas(site: NameSite): boolean | undefined;
}

/** A server not up when the name was asked for: its connect (shared with any in flight) and its waits. */
interface Pending {
  site: NameSite;
  connect: Promise<unknown>;
  /** Waited for as open_toolbox waits: its toolbox's `openWaitMs` (at most `useToolWaitMs`); 0 once overdue. */
  openMs: number;
  /** Its toolbox's `useToolWaitMs`, and when that runs out. */
  limitMs: number;
  deadline: number;
}

/**
 * Waits for a bare or loose name's servers (a toolbox's, or a toolset's across toolboxes). They are waited for as
 * open_toolbox waits (each its toolbox's `openWaitMs`), so servers that start in time always judge the name together;
 * past that, the name is taken as soon as a server that is up has it, and a name none of them has waits longer (up to
 * `useToolWaitMs`) only for a server whose last known list has it — and not even then when its last start timed out
 * (see serverWait): one server that hangs at start-up holds up no other answer. Never rejects for a failed connect
 * (a failure is a connect's value); throws what starting a connect throws (the toolbox went away, shutting down).
 */
export async function waitForName<Lookup>(host: NameWaitHost, scope: Scope, sites: readonly NameSite[], judge: NameJudge<Lookup>): Promise<WaitedName<Lookup>> {
  const pending = startPending(host, scope, sites);
  await Promise.all(pending.map((p) => within(p.connect, p.openMs)));
  let lookup = judge.find();
  const unlisted: NameSite[] = [];
  const again: WaitedName<Lookup>['again'] = [];
  const waiting: Pending[] = [];
  if (judge.notFound(lookup)) {
    for (const p of pending.filter((p) => !scope.manager.isConnected(p.site.toolbox, p.site.server))) {
      const has = judge.listHas(p.site);
      const hung = has ? serverWait(host, scope, p.site.toolbox, p.site.server).again : undefined;
      if (has === undefined) unlisted.push(p.site);
      else if (hung) again.push({ ...p.site, status: hung, waitedMs: Math.min(host.openWait(p.site.toolbox), p.limitMs) });
      else if (has) waiting.push(p);
    }
  }
  let open = [...waiting];
  while (judge.notFound(lookup) && open.length > 0) {
    const now = Date.now();
    open = open.filter((p) => p.deadline > now);
    if (open.length === 0) break;
    // Each connect settles once; the race ends at the first to settle, or at the first deadline.
    const settled = await within(Promise.race(open.map((p) => p.connect.then(() => p))), Math.min(...open.map((p) => p.deadline)) - now);
    if (!settled) continue;
    open = open.filter((p) => p !== settled.value);
    lookup = judge.find();
  }
  const statusOf = (site: NameSite): SlotStatus | undefined => scope.manager.serverStatus(site.toolbox).find((s) => s.server === site.server)?.status;
  const starting = (site: NameSite): SlotStatus[] => {
    const status = statusOf(site);
    return status?.state === 'starting' ? [status] : [];
  };
  return {
    lookup,
    starting: waiting.filter((p) => starting(p.site).length > 0).map((p) => ({ ...p.site, waitMs: p.limitMs })),
    unlisted: unlisted.flatMap((site) => starting(site).map((status) => ({ ...site, status }))),
    again: again.filter((a) => starting(a).length > 0),
  };
}

/** Starts (or joins) the connect of every site that is not up, with how long each is worth waiting for. */
function startPending(host: NameWaitHost, scope: Scope, sites: readonly NameSite[]): Pending[] {
  const started = Date.now();
  const pending: Pending[] = [];
  for (const site of sites) {
    if (scope.manager.isConnected(site.toolbox, site.server)) continue;
    const connect = scope.manager.connectServer(site.toolbox, site.server);
    const limitMs = host.useToolWait(site.toolbox);
    const openMs = Math.min(host.openWait(site.toolbox), limitMs);
    // As open_toolbox waits: a server already starting that long (an open, a search, an earlier call waited for it)
    // is not waited for again; it is judged at once as still starting.
    const status = scope.manager.serverStatus(site.toolbox).find((s) => s.server === site.server)?.status;
    const overdue = status?.state === 'starting' && started - status.since >= openMs;
    pending.push({ site, connect, openMs: overdue ? 0 : openMs, limitMs, deadline: started + limitMs });
  }
  return pending;
}

/** Every server's tools as the scope last knew them (live, else the catalog cache; undefined: never known), read once. */
export async function knownLists(host: NameWaitHost, scope: Scope, toolbox: ToolboxConfig): Promise<Map<string, readonly Tool[] | undefined>> {
  const lists = await Promise.all(toolbox.servers.map((server) => host.lastKnownTools(scope, toolbox.name, server)));
  return new Map(toolbox.servers.map((server, i) => [server.name, lists[i]]));
}

/**
 * The name looked up in the servers' last known lists (`knownLists`): a disabled tool shows as `hidden`. Undefined
 * when some server's tools are not known at all (it might have an enabled tool of that name), unless `partial` (for
 * the closest names of a name no server can have).
 */
export function lastKnownLookup(host: NameWaitHost, toolbox: string, lists: ReadonlyMap<string, readonly Tool[] | undefined>, toolName: string, partial = false): ToolLookup | undefined {
  const servers: { server: string; tools: readonly Tool[] }[] = [];
  for (const [server, tools] of lists) {
    if (!tools && !partial) return undefined;
    if (tools) servers.push({ server, tools });
  }
  return new ToolboxCatalog(toolbox, servers, host.policy()).find(toolName);
}

/**
 * How long a call by full name waits for its server while it starts: `useToolWaitMs`, unless its last start timed
 * out — it will most likely hang again, so the call waits what is left of the toolbox's `openWaitMs` counted from when
 * this start began (each start is waited for that long once), and `again` says why (see startingAgain).
 */
export function serverWait(host: NameWaitHost, scope: Scope, toolbox: string, server: string): { waitMs: number; again?: HungBefore } {
  const useToolWait = host.useToolWait(toolbox);
  const status = scope.manager.serverStatus(toolbox).find((s) => s.server === server)?.status;
  if (status?.state !== 'starting' || status.lastFailure?.error.failure?.kind !== 'handshake-timeout') return { waitMs: useToolWait };
  const open = Math.min(host.openWait(toolbox), useToolWait);
  return { waitMs: Math.max(0, open - (Date.now() - status.since)), again: { ...status, lastFailure: status.lastFailure } };
}
