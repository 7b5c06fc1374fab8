import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { editDistance } from '../config/text.js';
import { formatToolName, parseToolName } from './names.js';
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

  constructor(toolbox: string, servers: readonly ServerTools[], policy: VisibilityPolicy) {
    this.toolbox = toolbox;
    const tools: CatalogTool[] = [];
    const hiddenList: HiddenTool[] = [];
    for (const { server, tools: list } of servers) {
      for (const tool of list) {
        const entry: CatalogTool = { name: formatToolName(toolbox, server, tool.name), toolbox, server, tool };
        const visibility = policy.check(toolbox, server, tool.name);
        if (!visibility.enabled) {
          const hidden = { ...entry, visibility };
          this.hiddenByName.set(entry.name, hidden);
          hiddenList.push(hidden);
          push(this.hiddenByBare, tool.name, hidden);
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

    return { notFound: true, suggestions: this.closest(name, 5) };
  }

  /** Canonical names closest to `name` (by edit distance on the canonical and the bare name). */
  closest(name: string, count: number): string[] {
    const target = name.toLowerCase();
    const bareTarget = (parseToolName(name)?.tool ?? name).toLowerCase();
    return this.tools
      .map((t) => {
        const d = Math.min(editDistance(target, t.name.toLowerCase()), editDistance(bareTarget, t.tool.name.toLowerCase()));
        const contains = t.name.toLowerCase().includes(bareTarget) ? -1 : 0;
        return { name: t.name, score: d + contains };
      })
      .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name))
      .slice(0, count)
      .map((x) => x.name);
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

const loose = (name: string): string => name.replace(/-/g, '_');
