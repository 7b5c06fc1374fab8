import { closestNames, suggestionCandidate, type SuggestionCandidate, type ToolboxCatalog } from '../catalog/toolbox-catalog.js';
import type { ResolvedToolset } from '../catalog/toolsets.js';
import { parseToolName } from '../catalog/names.js';
import { quoteClientText } from '../shared/client-text.js';
import { compileGlob } from '../shared/glob.js';
import type { ToolStatus, ToolStatusReport } from './tool-entry.js';
import type { WorkbenchError } from '../errors.js';
import { failedServer, type FailedServer } from '../clients/server-failure.js';
import type { PendingServer } from '../catalog/catalog-index.js';
import { pendingServer, waitForServers, worthWaiting, type OpenProgress } from './open-wait.js';
import type { SlotStatus } from '../clients/server-slot.js';
import { within } from '../shared/within.js';
import type { HungBefore } from './name-wait.js';

/**
 * A toolset name used where a toolbox name goes: `open_toolbox` lists just the toolset's tools (connecting only the
 * servers its patterns can reach) and `use_tool` routes each name to the toolbox that owns it. Names stay canonical,
 * so a tool is called the same way through its toolbox or through any toolset that holds it.
 */
export interface ToolsetHost<Entry extends { name: string }> {
  /** Connects one server (sharing any connect in flight); resolves with the failure, if any. */
  connect(toolbox: string, server: string): Promise<WorkbenchError | undefined>;
  /** Where each server of the toolbox stands (starting since when, after which failure). */
  status(toolbox: string): { server: string; status: SlotStatus }[];
  /** The toolbox's current catalog and its open_toolbox entries (overrides applied). */
  catalog(toolbox: string): { catalog: ToolboxCatalog; entries: readonly Entry[] };
}

export interface OpenedToolset<Entry> {
  /** `toolbox/server` labels. */
  connected: string[];
  failed: FailedServer[];
  /** Servers still starting when the answer was due (only with a deadline). */
  pending: PendingServer[];
  tools: Entry[];
}

/** How long open_toolbox waits for a toolset's servers, and the progress it reports meanwhile. */
export interface ToolsetWait {
  waitMs: number;
  onprogress?: (progress: OpenProgress) => void;
}

/**
 * Connects the servers the toolset needs (in parallel) and returns its enabled tools, in config order. With `wait`,
 * answers by its deadline: servers still starting then are named in `pending` and keep connecting in the background.
 */
export async function openToolset<Entry extends { name: string }>(
  host: ToolsetHost<Entry>,
  toolset: ResolvedToolset,
  wait?: ToolsetWait,
  bound?: ServerBound,
): Promise<OpenedToolset<Entry>> {
  const started = Date.now();
  const outcomes = new Map<string, WorkbenchError | undefined>();
  const connects = new Map(
    toolset.servers.map(({ toolbox, server }) => {
      const label = `${toolbox}/${server}`;
      return [label, host.connect(toolbox, server).then((failure) => void outcomes.set(label, failure))] as const;
    }),
  );
  // As a toolbox's open: a server starting since before this open is timed (and its last failure told) from its slot.
  const statuses = new Map(toolset.servers.map(({ toolbox, server }) => [`${toolbox}/${server}`, host.status(toolbox).find((s) => s.server === server)?.status]));
  const known = [...statuses].flatMap(([server, status]) => (status ? [{ server, status }] : []));
  if (wait) await waitForServers(worthWaiting(connects, known, wait.waitMs, started), wait.waitMs, connects.size, wait.onprogress);
  else await Promise.all(toolset.servers.map(({ toolbox, server }) => bounded(connects.get(`${toolbox}/${server}`)!, bound?.(toolbox, server))));
  const opened: OpenedToolset<Entry> = { connected: [], failed: [], pending: [], tools: [] };
  const now = Date.now();
  for (const label of connects.keys()) {
    const status = statuses.get(label);
    const since = status?.state === 'starting' ? status : undefined;
    const last = since?.lastFailure && { failed: failedServer(label, since.lastFailure.error), at: since.lastFailure.at };
    if (!outcomes.has(label)) opened.pending.push(pendingServer(label, since?.since ?? started, now, last));
    else {
      const failure = outcomes.get(label);
      if (failure === undefined) opened.connected.push(label);
      else opened.failed.push(failedServer(label, failure));
    }
  }
  for (const toolbox of new Set(toolset.servers.map((s) => s.toolbox))) {
    opened.tools.push(...host.catalog(toolbox).entries.filter((entry) => toolset.includes(entry.name)));
  }
  return opened;
}

/**
 * Without a deadline, how long one server (its connect just started) is waited for: undefined, until its connect
 * settles; a number, at most that long (it keeps connecting; a server whose last start timed out: see serverWait).
 */
export type ServerBound = (toolbox: string, server: string) => number | undefined;

/** `connect` when it settles, or after `ms` when given (it keeps running). */
async function bounded(connect: Promise<void>, ms: number | undefined): Promise<unknown> {
  return ms === undefined ? connect : within(connect, ms);
}

/** A server of the toolset whose wait was cut short (see serverWait): how long it was waited for, and why so short. */
export interface CutShort {
  waitMs: number;
  again: HungBefore;
}

/** A server still starting when its wait, cut short, ran out. */
export interface StartingServer extends CutShort {
  toolbox: string;
  server: string;
}

/** Where a name goes: a toolbox, a refusal, or a wait cut short for a server still starting. */
export type ToolsetRoute = { toolbox: string; toolName: string } | { error: string; code: 'TOOL_NOT_FOUND' } | { starting: StartingServer };

/**
 * Which toolbox a `use_tool` name given with a toolset belongs to. A canonical name of the toolset is routed at once
 * (the toolbox path then refuses a disabled tool before anything connects); a bare or loose name is looked up among
 * the toolset's tools once its servers are connected (`cutShort` may cut a server's wait short: a name not found
 * while it still starts is `starting`, with that wait), and must be unique there.
 */
export async function routeToolsetCall<Entry extends { name: string }>(
  host: ToolsetHost<Entry>,
  toolset: ResolvedToolset,
  toolName: string,
  toolboxNames: ReadonlySet<string>,
  cutShort?: (toolbox: string, server: string) => CutShort | undefined,
): Promise<ToolsetRoute> {
  const name = toolset.config.name;
  const parts = parseToolName(toolName);
  if (parts && toolboxNames.has(parts.toolbox) && toolset.includes(toolName)) return { toolbox: parts.toolbox, toolName };

  const cut: StartingServer[] = [];
  const { pending } = await openToolset(host, toolset, undefined, recording(cutShort, cut));
  const candidates: { name: string; bare: string; hidden: boolean }[] = [];
  const suggestions: SuggestionCandidate[] = [];
  for (const toolbox of new Set(toolset.servers.map((s) => s.toolbox))) {
    const { catalog } = host.catalog(toolbox);
    for (const t of catalog.tools) {
      if (!toolset.includes(t.name)) continue;
      candidates.push({ name: t.name, bare: t.tool.name, hidden: false });
      suggestions.push(suggestionCandidate(t));
    }
    for (const t of catalog.hidden) if (toolset.includes(t.name)) candidates.push({ name: t.name, bare: t.tool.name, hidden: true });
  }
  const loose = (s: string): string => s.replace(/-/g, '_');
  for (const match of [
    (c: (typeof candidates)[number]) => c.name === toolName,
    (c: (typeof candidates)[number]) => loose(c.name) === loose(toolName),
    (c: (typeof candidates)[number]) => !parts && c.bare === toolName,
    (c: (typeof candidates)[number]) => !parts && loose(c.bare) === loose(toolName),
  ]) {
    const found = candidates.filter(match);
    // Enabled tools first: a hidden tool only answers (with "disabled") when it is the one meant.
    const enabled = found.filter((c) => !c.hidden);
    const pick = enabled.length > 0 ? enabled : found;
    if (pick.length === 1) return { toolbox: parseToolName(pick[0]!.name)!.toolbox, toolName: pick[0]!.name };
    if (pick.length > 1) {
      return {
        error: `Tool name ${quoteClientText(toolName)} is ambiguous in toolset "${name}": it matches ${pick.map((c) => c.name).join(', ')}. Use the full name.`,
        code: 'TOOL_NOT_FOUND',
      };
    }
  }
  if (parts && toolboxNames.has(parts.toolbox)) {
    // A full name outside the toolset (by any spelling): its toolbox is named in it, so that is the way on (a closest
    // name of the toolset would be another tool, perhaps one that deletes what this one creates).
    return {
      error: `Tool ${quoteClientText(toolName)} is not in toolset "${name}". Its name says toolbox "${parts.toolbox}": call use_tool with toolbox_name "${parts.toolbox}" to call it there.`,
      code: 'TOOL_NOT_FOUND',
    };
  }
  // Not found while a server whose wait was cut short still starts: it may have the name.
  const starting = cut.find((c) => pending.some((p) => p.server === `${c.toolbox}/${c.server}`));
  if (starting) return { starting };
  const closest = closestNames(toolName, suggestions, 5);
  const hint = closest.length > 0 ? ` Closest names: ${closest.join(', ')}.` : '';
  return {
    error: `Tool ${quoteClientText(toolName)} is not in toolset "${name}".${hint} Call open_toolbox {"toolbox_name":"${name}"} to list its tools.`,
    code: 'TOOL_NOT_FOUND',
  };
}

/** A ServerBound from `cutShort` that adds each server whose wait it cuts short to `cut`. */
function recording(cutShort: ((toolbox: string, server: string) => CutShort | undefined) | undefined, cut: StartingServer[]): ServerBound {
  return (toolbox, server) => {
    const wait = cutShort?.(toolbox, server);
    if (wait) cut.push({ toolbox, server, ...wait });
    return wait?.waitMs;
  };
}

/**
 * What a toolset resolves to (`tools list --toolset`): connects the servers it needs, then every tool it holds with its
 * status (`statuses` gives a toolbox's), sorted by name, and the patterns that matched no tool of those servers.
 */
export async function describeToolset<Entry extends { name: string }>(
  host: ToolsetHost<Entry>,
  toolset: ResolvedToolset,
  statuses: (toolbox: string) => ToolStatus[],
): Promise<ToolStatusReport & { unmatched: string[] }> {
  const opened = await openToolset(host, toolset);
  const servers_failed = opened.failed.map((failure) => {
    const [toolbox, server] = failure.server.split('/') as [string, string];
    return { ...failure, toolbox, server };
  });
  const all = [...new Set(toolset.servers.map((s) => s.toolbox))].flatMap(statuses);
  const tools = all.filter((s) => toolset.includes(s.name)).sort((a, b) => a.name.localeCompare(b.name));
  const unmatched = toolset.config.tools.filter((pattern) => !all.some((s) => compileGlob(pattern)(s.name)));
  return { tools, servers_failed, unmatched };
}
