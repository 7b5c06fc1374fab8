import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { ToolboxCatalog, type ToolLookup } from '../catalog/toolbox-catalog.js';
import type { VisibilityPolicy } from '../catalog/visibility.js';
import type { ServerConfig, ToolboxConfig } from '../config/types.js';
import { quoteClientText } from '../shared/client-text.js';
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
 * it, so one server that hangs at start-up holds up only a name no other server has. `starting`: the servers that may
 * still have the name when the wait ended (still starting past `useToolWaitMs`).
 */
export async function lookupAcrossToolbox(host: NameWaitHost, scope: Scope, toolbox: ToolboxConfig, toolName: string): Promise<{ lookup: ToolLookup; starting: string[] }> {
  const lists = await knownLists(host, scope, toolbox);
  const known = lastKnownLookup(host, toolbox.name, lists, toolName);
  if (known && 'hidden' in known) return { lookup: known, starting: [] };
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
  // A server whose last known list does not have the name is not waited for: a name no server has is answered at
  // once (with the closest names), not after `useToolWaitMs` while one hangs.
  if ('notFound' in lookup) {
    for (const server of [...starting.keys()]) {
      const tools = lists.get(server);
      if (tools && 'notFound' in new ToolboxCatalog(toolbox.name, [{ server, tools }], host.policy()).find(toolName)) starting.delete(server);
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
  const stillUp = [...starting.keys()].filter((server) => scope.manager.serverStatus(toolbox.name).some((s) => s.server === server && s.status.state === 'starting'));
  return { lookup, starting: stillUp };
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
