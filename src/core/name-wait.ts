import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { ToolboxCatalog, type ToolLookup } from '../catalog/toolbox-catalog.js';
import type { VisibilityPolicy } from '../catalog/visibility.js';
import type { ServerConfig, ToolboxConfig } from '../config/types.js';
import { formatToolName, parseToolName } from '../catalog/names.js';
import type { SlotStatus } from '../clients/server-slot.js';
import { quoteClientText } from '../shared/client-text.js';
import { formatAge } from './answer-head.js';
import { shortError } from './head-bounds.js';
import { within } from '../shared/within.js';
import { waitForServers, worthWaiting } from './open-wait.js';
import type { CachedCatalog, Scope } from './scope.js';
import { errorResult } from './tool-entry.js';

/**
 * `use_tool` with a bare or loose name (`echo`, not `dev__fx__echo`) while some server of the toolbox is not up: the
 * name is unique only across all of its servers, so they are waited for — within bounds, and never for a name a
 * last known list already answers (README "use_tool").
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
 * name. Otherwise the servers are waited for as open_toolbox waits (`openWaitMs`), so a toolbox that starts in time
 * always judges the name across all of its servers; past that, the name is taken as soon as a server that is up has
 * it, and a name none of them has waits longer (up to `useToolWaitMs`) only for a server whose last known list has
 * it: one server that hangs at start-up holds up no other answer.
 */
export async function lookupAcrossToolbox(host: NameWaitHost, scope: Scope, toolbox: ToolboxConfig, toolName: string): Promise<AcrossToolbox> {
  const lists = await knownLists(host, scope, toolbox);
  const known = lastKnownLookup(host, toolbox.name, lists, toolName);
  if (known && 'hidden' in known) return { lookup: known, starting: [], unlisted: [], again: [], waitedMs: 0 };
  const find = (): ToolLookup => host.cachedCatalog(scope, toolbox.name).catalog.find(toolName);
  const connects = new Map<string, Promise<unknown>>();
  for (const server of toolbox.servers) {
    if (!scope.manager.isConnected(toolbox.name, server.name)) connects.set(server.name, scope.manager.connectServer(toolbox.name, server.name));
  }
  const limit = host.useToolWait(toolbox.name);
  const wait = Math.min(host.openWait(toolbox.name), limit);
  await waitForServers(worthWaiting(connects, scope.manager.serverStatus(toolbox.name), wait), wait, connects.size, undefined);
  let lookup = find();
  const starting = new Map([...connects].filter(([server]) => !scope.manager.isConnected(toolbox.name, server)));
  // Past `openWaitMs`, only a server whose last known list has the name is waited for (up to `useToolWaitMs`, as its
  // full name would be): a name no server has is answered at once, with the closest names, not after the limit while
  // one hangs; a server whose tools are not known at all is named in that answer as still starting.
  const unlisted: string[] = [];
  // A server whose last start timed out is not waited for past `openWaitMs` even then, as its full name would not be.
  const again: { server: string; status: HungBefore }[] = [];
  if ('notFound' in lookup) {
    for (const server of [...starting.keys()]) {
      const tools = lists.get(server);
      if (!tools) unlisted.push(server);
      if (!tools || 'notFound' in new ToolboxCatalog(toolbox.name, [{ server, tools }], host.policy()).find(toolName)) starting.delete(server);
      else {
        const hung = serverWait(host, scope, toolbox.name, server).again;
        if (hung) {
          starting.delete(server);
          again.push({ server, status: hung });
        }
      }
    }
  }
  const deadline = Date.now() + limit - wait;
  while ('notFound' in lookup && starting.size > 0 && Date.now() < deadline) {
    // Connects never reject (a failure is their value): each settles once, with its server's name.
    const settled = await within(Promise.race([...starting].map(([server, connect]) => connect.then(() => server))), deadline - Date.now());
    if (!settled) break;
    starting.delete(settled.value);
    lookup = find();
  }
  const statuses = scope.manager.serverStatus(toolbox.name);
  const stillUp = (server: string): boolean => statuses.some((s) => s.server === server && s.status.state === 'starting');
  return { lookup, starting: [...starting.keys()].filter(stillUp), unlisted: unlisted.filter(stillUp), again: again.filter((a) => stillUp(a.server)), waitedMs: wait };
}

/** A bare name looked up across a toolbox (see lookupAcrossToolbox). */
export interface AcrossToolbox {
  lookup: ToolLookup;
  /** Servers whose last known list has the name, still starting when `useToolWaitMs` ran out. */
  starting: string[];
  /** Servers still starting whose tools are not known at all (not waited for past `openWaitMs`). */
  unlisted: string[];
  /** Servers whose last known list has the name, starting again after a start that timed out (not waited for past `openWaitMs`). */
  again: { server: string; status: HungBefore }[];
  /** How long the servers were waited for as open_toolbox waits (`openWaitMs`). */
  waitedMs: number;
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

/** The refusal of a call whose server (or servers, for a bare name) is still starting after `waitMs`: what to do next. */
export function stillStarting(toolbox: string, toolName: string, servers: readonly string[], waitMs: number, suggestions: readonly string[] = []): CallToolResult {
  const closest = suggestions.length > 0 ? ` (Or did you mean ${suggestions.join(', ')}? Those are up.)` : '';
  const hint = `Call the tool again shortly; open_toolbox {"toolbox_name":"${toolbox}"} lists its tools once it is ready.${closest}`;
  const which = servers.length === 1 ? `server "${servers[0]}" of toolbox "${toolbox}" is` : `servers ${servers.map((s) => `"${s}"`).join(', ')} of toolbox "${toolbox}" are`;
  return errorResult(
    `Cannot call ${quoteClientText(toolName)}: ${which} still starting after ${Math.round(waitMs / 1000)} s (useToolWaitMs); ${servers.length === 1 ? 'it keeps' : 'they keep'} starting in the background, within ${servers.length === 1 ? 'its' : 'their'} connectTimeoutMs. ${hint}`,
    'CONNECT_TIMEOUT',
    { toolbox, server: servers.join(', '), hint },
  );
}

/**
 * The answer to a bare or mistyped name that no server that is up has, while servers whose tools are not known yet are
 * still starting: given at once, from what is known (the closest names that are up), naming each of those servers as
 * still starting — or starting again, with how its last start ended — and the model's next step either way.
 */
export function notListedYet(toolbox: string, toolName: string, servers: readonly { server: string; status: SlotStatus }[], suggestions: readonly string[]): CallToolResult {
  const now = Date.now();
  const notes = servers.map(({ server, status }) => {
    const since = status.state === 'starting' ? status.since : now;
    const last = status.state === 'starting' ? status.lastFailure : undefined;
    if (!last) return `Server "${server}" is still starting (${formatAge(now - since)} so far).`;
    const how = shortError(last.error.message);
    return `Server "${server}" is starting again (${formatAge(now - since)} so far) and may not answer: its last start failed ${formatAge(now - last.at)} ago: ${how}${/[.!?…]$/.test(how) ? '' : '.'}`;
  });
  const names = servers.map((s) => s.server);
  const one = names.length === 1;
  const closest = suggestions.length > 0 ? ` Closest names that are up: ${suggestions.join(', ')}.` : '';
  // A mistyped full name (`mixd__fx__echo`) is offered under the starting server by its tool part.
  const tool = parseToolName(toolName)?.tool ?? toolName;
  const full = one ? formatToolName(toolbox, names[0]!, tool) : `${toolbox}__<server>__${tool}`;
  const failing = servers.some((s) => s.status.state === 'starting' && s.status.lastFailure);
  const hint =
    `${suggestions.length > 0 ? 'If you meant one of the closest names, call it by that name. ' : ''}` +
    `If it is a tool of ${one ? `"${names[0]}"` : 'one of those servers'}, call it again shortly, or by its full name (${full}), which waits for the server` +
    (failing ? "; if it keeps failing, use the toolbox's other servers and tell the user to run `mcp-workbench doctor`." : '.');
  return errorResult(
    `Cannot call ${quoteClientText(toolName)}: no server of toolbox "${toolbox}" that is up has a tool of that name.${closest} ${notes.join(' ')} ${one ? 'Its' : 'Their'} tools are not known yet, so it may be one of them. ${hint}`,
    'CONNECT_TIMEOUT',
    { toolbox, server: names.join(', '), hint },
  );
}

/** A server (re)starting now whose last start timed out (a hung handshake, a remote connect that never answered). */
type Starting = Extract<SlotStatus, { state: 'starting' }>;
export type HungBefore = Starting & { lastFailure: NonNullable<Starting['lastFailure']> };

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

/**
 * The refusal of a call whose server is starting again after its last start timed out, given by `openWaitMs` (see
 * serverWait): how long that start ran, how long ago it was stopped, and the model's next step.
 */
export function startingAgain(toolbox: string, toolName: string, server: string, status: HungBefore, waitedMs: number): CallToolResult {
  const now = Date.now();
  const last = status.lastFailure;
  const ranMs = last.error.failure?.timeoutMs;
  const ran = ranMs !== undefined ? `ran ${seconds(ranMs)} (its connectTimeoutMs) without completing the MCP handshake and ` : 'did not complete the MCP handshake and ';
  const hint = "Use the toolbox's other servers' tools meanwhile, and call this tool again later: it is served once the server is up. If it keeps timing out, tell the user to run `mcp-workbench doctor`.";
  return errorResult(
    `Cannot call ${quoteClientText(toolName)}: server "${server}" of toolbox "${toolbox}" is starting again (${formatAge(now - status.since)} so far) and may hang again: its last start ${ran}was stopped ${formatAge(now - last.at)} ago. So this call waited ${seconds(waitedMs)} for it (the toolbox's openWaitMs, not useToolWaitMs); it keeps starting in the background. ${hint}`,
    'CONNECT_TIMEOUT',
    { toolbox, server, hint },
  );
}

/** A duration in seconds, to a tenth: "2.5 s", "60 s". */
function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
