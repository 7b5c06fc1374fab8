import type { Tool } from '@modelcontextprotocol/client';
import { boundedEditDistance } from '../shared/edit-distance.js';
import { formatToolName, parseToolName } from './names.js';
import type { TrustPolicy } from './trust.js';
import type { Visibility, VisibilityPolicy } from './visibility.js';

/**
 * One toolbox's tools, indexed once when a server's catalog or the visibility policy changes, so `use_tool` lookups
 * are Map hits and never scans.
 */
export interface CatalogTool {
  /** Canonical `{toolbox}__{server}__{tool}` name. */
  name: string;
  toolbox: string;
  server: string;
  /** The downstream tool exactly as the server listed it. */
  tool: Tool;
  /** Set when its definition is not the approved one but it stays usable (`toolChanges: "warn"`). */
  unapproved?: { change: 'new' | 'changed' | 'unverified'; reason: string };
}

export interface HiddenTool extends CatalogTool {
  visibility: Extract<Visibility, { enabled: false }>;
}

export interface ServerTools {
  server: string;
  tools: readonly Tool[];
}

export type ToolLookup =
  | { found: CatalogTool }
  | { hidden: HiddenTool }
  | { ambiguous: CatalogTool[] }
  | { notFound: true; suggestions: string[] };

export class ToolboxCatalog {
  readonly toolbox: string;
  /** Enabled tools in server order, then downstream order. */
  readonly tools: readonly CatalogTool[];
  /** Tools the visibility policy hides, with the reason. */
  readonly hidden: readonly HiddenTool[];
  private readonly byName = new Map<string, CatalogTool>();
  private readonly hiddenByName = new Map<string, HiddenTool>();
  private readonly byBare = new Map<string, CatalogTool[]>();
  private readonly byLoose = new Map<string, CatalogTool[]>();
  private readonly hiddenByBare = new Map<string, HiddenTool[]>();
  /** Hidden tools by their `-`/`_`-insensitive bare name: a variant of a disabled tool's name is told it is disabled. */
  private readonly hiddenByLoose = new Map<string, HiddenTool[]>();

  /**
   * @param trust whether each tool's definition is the approved one (README "Pinned tool definitions"): a held tool is
   *   hidden with source `quarantine`, a flagged one stays enabled and carries `unapproved`. No checks without it.
   */
  constructor(toolbox: string, servers: readonly ServerTools[], policy: VisibilityPolicy, trust?: TrustPolicy) {
    this.toolbox = toolbox;
    const tools: CatalogTool[] = [];
    const hiddenList: HiddenTool[] = [];
    for (const { server, tools: list } of servers) {
      for (const tool of list) {
        const entry: CatalogTool = { name: formatToolName(toolbox, server, tool.name), toolbox, server, tool };
        let visibility = policy.check(toolbox, server, tool.name);
        const verdict = visibility.enabled && trust ? trust.verdict(toolbox, server, tool, list) : undefined;
        if (verdict && verdict.state !== 'approved') {
          // `rule` says which change it is: new, changed or unverified.
          if (verdict.held) visibility = { enabled: false, source: 'quarantine', rule: verdict.state, reason: verdict.reason, ...(verdict.user !== undefined && { user: verdict.user }) };
          else entry.unapproved = { change: verdict.state, reason: verdict.reason };
        }
        if (!visibility.enabled) {
          const hidden = { ...entry, visibility };
          this.hiddenByName.set(entry.name, hidden);
          hiddenList.push(hidden);
          push(this.hiddenByBare, tool.name, hidden);
          push(this.hiddenByLoose, loose(tool.name), hidden);
          continue;
        }
        if (this.byName.has(entry.name)) continue; // a server listing the same name twice: first wins
        tools.push(entry);
        this.byName.set(entry.name, entry);
        push(this.byBare, tool.name, entry);
        push(this.byLoose, loose(tool.name), entry);
      }
    }
    this.tools = tools;
    this.hidden = hiddenList;
  }

  get(canonicalName: string): CatalogTool | undefined {
    return this.byName.get(canonicalName);
  }

  /**
   * `findToolInToolbox`: the canonical name; else a bare downstream name that is unique in the toolbox; else a name
   * that differs only by `-` vs `_` when that is unique. Disabled tools are reported as such, never as unknown.
   */
  find(name: string): ToolLookup {
    const exact = this.byName.get(name);
    if (exact) return { found: exact };
    const hidden = this.hiddenByName.get(name);
    if (hidden) return { hidden };

    const parts = parseToolName(name);
    const inThisToolbox = parts?.toolbox === this.toolbox;
    if (inThisToolbox) {
      // Canonical form with a loose tool part, e.g. dev__memory__read-graph for read_graph.
      const candidates = (this.byLoose.get(loose(parts.tool)) ?? []).filter((t) => t.server === parts.server);
      if (candidates.length === 1) return { found: candidates[0]! };
    }

    const bare = this.byBare.get(name);
    if (bare?.length === 1) return { found: bare[0]! };
    if (bare && bare.length > 1) return { ambiguous: bare };
    const hiddenBare = this.hiddenByBare.get(name);
    if (hiddenBare?.length === 1 && !bare) return { hidden: hiddenBare[0]! };

    const looseMatches = this.byLoose.get(loose(name));
    if (looseMatches?.length === 1) return { found: looseMatches[0]! };
    if (looseMatches && looseMatches.length > 1) return { ambiguous: looseMatches };
    // No enabled tool by any spelling: a `-`/`_` variant of one disabled tool's name is that tool, disabled.
    const looseHidden = inThisToolbox
      ? (this.hiddenByLoose.get(loose(parts.tool)) ?? []).filter((t) => t.server === parts.server)
      : (this.hiddenByLoose.get(loose(name)) ?? []);
    if (looseHidden.length === 1) return { hidden: looseHidden[0]! };

    return { notFound: true, suggestions: this.closest(name, 5) };
  }

  /** Canonical names closest to `name` among this toolbox's enabled tools (see {@link closestNames}). */
  closest(name: string, count: number): string[] {
    return closestNames(name, (this.lowered ??= this.tools.map(suggestionCandidate)), count);
  }

  private lowered: SuggestionCandidate[] | undefined;
}

/** A tool as closest-name suggestions compare it: its canonical and bare names, lower-cased once. */
export interface SuggestionCandidate {
  name: string;
  canonical: string;
  bare: string;
}

export function suggestionCandidate(t: CatalogTool): SuggestionCandidate {
  return { name: t.name, canonical: t.name.toLowerCase(), bare: t.tool.name.toLowerCase() };
}

/**
 * The canonical names closest to `name`: within a small edit distance of the canonical or the bare name, or
 * containing the bare name. Bounded in cost whatever the client sent: the name is cut to
 * {@link MAX_SUGGESTION_INPUT} characters, candidates whose length alone rules them out are skipped, and the edit
 * distance is computed only near the diagonal up to the allowed distance (see boundedEditDistance) — at most a few
 * thousand steps per tool.
 */
export function closestNames(name: string, candidates: readonly SuggestionCandidate[], count: number): string[] {
  const target = name.slice(0, MAX_SUGGESTION_INPUT).toLowerCase();
  const bareTarget = (parseToolName(target)?.tool ?? target).toLowerCase();
  const max = Math.min(MAX_SUGGESTION_DISTANCE, Math.max(2, Math.floor(bareTarget.length / 3)));
  const scored: { name: string; score: number }[] = [];
  for (const t of candidates) {
    const d = Math.min(boundedEditDistance(target, t.canonical, max), boundedEditDistance(bareTarget, t.bare, max));
    const contains = bareTarget.length >= 3 && t.canonical.includes(bareTarget);
    if (d > max && !contains) continue;
    scored.push({ name: t.name, score: Math.min(d, max + 1) - (contains ? 1 : 0) });
  }
  return scored
    .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name))
    .slice(0, count)
    .map((x) => x.name);
}

/** How much of a client's name is compared for suggestions. */
const MAX_SUGGESTION_INPUT = 64;
/** The largest edit distance still offered as a suggestion. */
const MAX_SUGGESTION_DISTANCE = 6;

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

const loose = (name: string): string => name.replace(/-/g, '_');
