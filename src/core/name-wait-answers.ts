import type { CallToolResult } from '@modelcontextprotocol/client';
import { formatToolName, parseToolName } from '../catalog/names.js';
import type { SlotStatus } from '../clients/server-slot.js';
import { quoteClientText } from '../shared/client-text.js';
import { formatAge } from './answer-head.js';
import { shortError } from './head-bounds.js';
import { errorResult } from './tool-entry.js';
import type { LookedUpIn, NextSteps } from './next-steps.js';

export type { LookedUpIn } from './next-steps.js';

/**
 * The answers to a call that waited for servers still starting (name-wait.ts): the same for a name given with a
 * toolbox and with a toolset (README "Tool names and calls", "Toolsets").
 */

/** One server of a toolbox, as a name's wait sees it. */
export interface NameSite {
  toolbox: string;
  server: string;
}

/** A server (re)starting now whose last start timed out (a hung handshake, a remote connect that never answered). */
type Starting = Extract<SlotStatus, { state: 'starting' }>;
export type HungBefore = Starting & { lastFailure: NonNullable<Starting['lastFailure']> };

/** A bare or loose name looked up across servers that were waited for (see name-wait.ts waitForName). */
export interface WaitedName<Lookup> {
  lookup: Lookup;
  /** Servers whose last known list has the name, still starting when their `useToolWaitMs` (`waitMs`) ran out. */
  starting: (NameSite & { waitMs: number })[];
  /** Servers still starting whose tools are not known at all (not waited for past `openWaitMs`). */
  unlisted: (NameSite & { status: SlotStatus })[];
  /**
   * Servers whose last known list has the name, starting again after a start that timed out: waited for only as
   * open_toolbox waits (`waitedMs`, their toolbox's `openWaitMs`).
   */
  again: (NameSite & { status: HungBefore; waitedMs: number })[];
}

/**
 * The answer to a name that no server that is up has, while servers that may have it are still starting: a wait to
 * retry, not an unknown name. Undefined when no such server is left (the name is unknown, with `suggestions`).
 */
export function waitedRefusal(where: LookedUpIn, toolName: string, waited: WaitedName<unknown>, suggestions: readonly string[], steps: NextSteps): CallToolResult | undefined {
  const [hung] = waited.again;
  if (waited.starting.length === 0 && hung) return startingAgain(hung.toolbox, toolName, hung.server, hung.status, hung.waitedMs, steps);
  if (waited.starting.length > 0) return stillStarting(where, toolName, waited.starting, Math.max(...waited.starting.map((s) => s.waitMs)), suggestions, steps);
  if (waited.unlisted.length > 0) return notListedYet(where, toolName, waited.unlisted, suggestions, steps);
  return undefined;
}

/** The refusal of a call whose server (or servers, for a bare name) is still starting after `waitMs`: what to do next. */
export function stillStarting(where: LookedUpIn, toolName: string, servers: readonly NameSite[], waitMs: number, suggestions: readonly string[], steps: NextSteps): CallToolResult {
  const closest = suggestions.length > 0 ? ` (Or did you mean ${suggestions.join(', ')}? Those are up.)` : '';
  const hint = `${steps.callAgain(where, toolName)}${closest}`;
  const one = servers.length === 1;
  return errorResult(
    `Cannot call ${quoteClientText(toolName)}: ${one ? 'server' : 'servers'} ${serversOf(servers)} ${one ? 'is' : 'are'} still starting after ${Math.round(waitMs / 1000)} s (useToolWaitMs); ${one ? 'it keeps' : 'they keep'} starting in the background, within ${one ? 'its' : 'their'} connectTimeoutMs. ${hint}`,
    'CONNECT_TIMEOUT',
    { toolbox: onlyToolbox(servers), server: servers.map((s) => s.server).join(', '), hint },
  );
}

/**
 * The answer to a bare or mistyped name that no server that is up has, while servers whose tools are not known yet are
 * still starting: given at once, from what is known (the closest names that are up), naming each of those servers as
 * still starting — or starting again, with how its last start ended — and the model's next step either way.
 */
export function notListedYet(where: LookedUpIn, toolName: string, servers: readonly (NameSite & { status: SlotStatus })[], suggestions: readonly string[], steps: NextSteps): CallToolResult {
  const now = Date.now();
  const toolbox = onlyToolbox(servers);
  // Across toolboxes (a toolset), a server is named as the toolset names it: `toolbox/server`.
  const label = (s: NameSite): string => (toolbox ? s.server : `${s.toolbox}/${s.server}`);
  const notes = servers.map((site) => {
    const { status } = site;
    const since = status.state === 'starting' ? status.since : now;
    const last = status.state === 'starting' ? status.lastFailure : undefined;
    if (!last) return `Server "${label(site)}" is still starting (${formatAge(now - since)} so far).`;
    const how = shortError(last.error.message);
    return `Server "${label(site)}" is starting again (${formatAge(now - since)} so far) and may not answer: its last start failed ${formatAge(now - last.at)} ago: ${how}${/[.!?…]$/.test(how) ? '' : '.'}`;
  });
  const one = servers.length === 1;
  const closest = suggestions.length > 0 ? ` Closest names that are up: ${suggestions.join(', ')}.` : '';
  // A mistyped full name (`mixd__fx__echo`) is offered under the starting server by its tool part.
  const tool = parseToolName(toolName)?.tool ?? toolName;
  const full = one ? formatToolName(servers[0]!.toolbox, servers[0]!.server, tool) : `${toolbox ?? '<toolbox>'}__<server>__${tool}`;
  const failing = servers.some((s) => s.status.state === 'starting' && s.status.lastFailure);
  const hint = steps.callByFullName(where, toolName, full, suggestions.length > 0, one ? label(servers[0]!) : undefined) + (failing ? `; if it keeps failing, ${steps.checkServers(where)}` : '.');
  return errorResult(
    `Cannot call ${quoteClientText(toolName)}: no server of ${where.kind} "${where.name}" that is up has a tool of that name.${closest} ${notes.join(' ')} ${one ? 'Its' : 'Their'} tools are not known yet, so it may be one of them. ${hint}`,
    'CONNECT_TIMEOUT',
    { toolbox, server: servers.map((s) => s.server).join(', '), hint },
  );
}

/**
 * The refusal of a call whose server is starting again after its last start timed out, given by `openWaitMs` (see
 * name-wait.ts serverWait): how long that start ran, how long ago it was stopped, and the model's next step.
 */
export function startingAgain(toolbox: string, toolName: string, server: string, status: HungBefore, waitedMs: number, steps: NextSteps): CallToolResult {
  const now = Date.now();
  const last = status.lastFailure;
  const ranMs = last.error.failure?.timeoutMs;
  const ran = ranMs !== undefined ? `ran ${seconds(ranMs)} (its connectTimeoutMs) without completing the MCP handshake and ` : 'did not complete the MCP handshake and ';
  const hint = steps.callLater(toolbox, toolName);
  return errorResult(
    `Cannot call ${quoteClientText(toolName)}: server "${server}" of toolbox "${toolbox}" is starting again (${formatAge(now - status.since)} so far) and may hang again: its last start ${ran}was stopped ${formatAge(now - last.at)} ago. So this call waited ${seconds(waitedMs)} for it (the toolbox's openWaitMs, not useToolWaitMs); it keeps starting in the background. ${hint}`,
    'CONNECT_TIMEOUT',
    { toolbox, server, hint },
  );
}

/** Servers named with their toolboxes: `"a" of toolbox "dev"`, `"a", "b" of toolbox "dev" and "c" of toolbox "ops"`. */
function serversOf(servers: readonly NameSite[]): string {
  const byToolbox = new Map<string, string[]>();
  for (const { toolbox, server } of servers) byToolbox.set(toolbox, [...(byToolbox.get(toolbox) ?? []), `"${server}"`]);
  return [...byToolbox].map(([toolbox, names]) => `${names.join(', ')} of toolbox "${toolbox}"`).join(' and ');
}

/** The one toolbox all `servers` belong to, if they share one. */
function onlyToolbox(servers: readonly NameSite[]): string | undefined {
  const toolboxes = new Set(servers.map((s) => s.toolbox));
  return toolboxes.size === 1 ? [...toolboxes][0] : undefined;
}

/** A duration in seconds, to a tenth: "2.5 s", "60 s". */
function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
