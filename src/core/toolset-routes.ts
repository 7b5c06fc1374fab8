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
import type { NameJudge } from './name-wait.js';
import type { NameSite, WaitedName } from './name-wait-answers.js';

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
  else await Promise.all(connects.values());
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
 * Where a name goes: a toolbox, or a refusal. A name not found while servers that may have it still start carries
 * them (`waited`) and the closest names that are up, so it is answered as a toolbox's bare name is (name-wait-answers.ts).
 */
export type ToolsetRoute = { toolbox: string; toolName: string } | ToolsetRefusal;

/**
 * A name the toolset cannot route. Its `error` states what is wrong; the caller ends it with its next step: the full
 * name of one of the tools it matches (`ambiguous`: their names), a call through the toolbox its full name says
 * (`elsewhere`), else how to see the toolset's names.
 */
export interface ToolsetRefusal {
  error: string;
  code: 'TOOL_NOT_FOUND';
  ambiguous?: string[];
  elsewhere?: string;
  waited?: WaitedName<unknown>;
  suggestions?: string[];
}

/** A name among a toolset's tools: where it goes (a disabled tool's toolbox refuses it), a refusal, or not found. */
type ToolsetMatch = { toolbox: string; toolName: string; hidden: boolean } | ToolsetRefusal | { notFound: true; suggestions: string[] };

/** How a bare name waits for the toolset's servers: as a toolbox's bare name waits (use-tool.ts gives name-wait.ts's). */
export interface ToolsetNameWait {
  /** A server's tools as last known (live, else the catalog cache), as its toolbox would list them; undefined: never known. */
  lastKnown(site: NameSite): Promise<ToolboxCatalog | undefined>;
  wait<Lookup>(sites: readonly NameSite[], judge: NameJudge<Lookup>): Promise<WaitedName<Lookup>>;
}

/**
 * Which toolbox a `use_tool` name given with a toolset belongs to. A canonical name of the toolset is routed at once
 * (the toolbox path then refuses a disabled tool before anything connects), and so is a bare name that every server's
 * last known list shows as one disabled tool; any other bare or loose name is looked up among the toolset's tools while
 * its servers are waited for as a toolbox's are for a bare name (`nameWait`), and must be unique there.
 */
export async function routeToolsetCall<Entry extends { name: string }>(
  host: ToolsetHost<Entry>,
  toolset: ResolvedToolset,
  toolName: string,
  toolboxNames: ReadonlySet<string>,
  nameWait: ToolsetNameWait,
): Promise<ToolsetRoute> {
  const parts = parseToolName(toolName);
  if (parts && toolboxNames.has(parts.toolbox) && toolset.includes(toolName)) return { toolbox: parts.toolbox, toolName };
  const sites = toolset.servers;
  const key = (site: NameSite): string => `${site.toolbox}/${site.server}`;
  const lists = await Promise.all(sites.map((site) => nameWait.lastKnown(site)));
  const listOf = new Map(sites.map((site, i) => [key(site), lists[i]]));
  const match = (catalogs: readonly ToolboxCatalog[]): ToolsetMatch => matchInToolset(toolset, toolName, toolboxNames, catalogs);
  const known = lists.every((list) => list !== undefined) ? match(lists as ToolboxCatalog[]) : undefined;
  if (known && 'toolbox' in known && known.hidden) return { toolbox: known.toolbox, toolName: known.toolName };
  const toolboxes = [...new Set(sites.map((s) => s.toolbox))];
  const { lookup, ...waited } = await nameWait.wait(sites, {
    find: () => match(toolboxes.map((toolbox) => host.catalog(toolbox).catalog)),
    notFound: (found) => 'notFound' in found,
    listHas: (site) => {
      const list = listOf.get(key(site));
      return list && !('notFound' in match([list]));
    },
  });
  if ('toolbox' in lookup) return { toolbox: lookup.toolbox, toolName: lookup.toolName };
  if ('error' in lookup) return lookup;
  const name = toolset.config.name;
  const hint = lookup.suggestions.length > 0 ? ` Closest names: ${lookup.suggestions.join(', ')}.` : '';
  return {
    error: `Tool ${quoteClientText(toolName)} is not in toolset "${name}".${hint}`,
    code: 'TOOL_NOT_FOUND',
    waited: { lookup, ...waited },
    suggestions: lookup.suggestions,
  };
}

/** The name among the toolset's tools in `catalogs`: canonical, then loose, then bare, then loose bare; unique. */
function matchInToolset(toolset: ResolvedToolset, toolName: string, toolboxNames: ReadonlySet<string>, catalogs: readonly ToolboxCatalog[]): ToolsetMatch {
  const name = toolset.config.name;
  const parts = parseToolName(toolName);
  const candidates: { name: string; bare: string; hidden: boolean }[] = [];
  const suggestions: SuggestionCandidate[] = [];
  for (const catalog of catalogs) {
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
    if (pick.length === 1) return { toolbox: parseToolName(pick[0]!.name)!.toolbox, toolName: pick[0]!.name, hidden: pick[0]!.hidden };
    if (pick.length > 1) {
      const names = pick.map((c) => c.name);
      return { error: `Tool name ${quoteClientText(toolName)} is ambiguous in toolset "${name}": it matches ${names.join(', ')}.`, code: 'TOOL_NOT_FOUND', ambiguous: names };
    }
  }
  if (parts && toolboxNames.has(parts.toolbox)) {
    // A full name outside the toolset (by any spelling): its toolbox is named in it, so that is the way on (a closest
    // name of the toolset would be another tool, perhaps one that deletes what this one creates).
    return { error: `Tool ${quoteClientText(toolName)} is not in toolset "${name}". Its name says toolbox "${parts.toolbox}":`, code: 'TOOL_NOT_FOUND', elsewhere: parts.toolbox };
  }
  return { notFound: true, suggestions: closestNames(toolName, suggestions, 5) };
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
