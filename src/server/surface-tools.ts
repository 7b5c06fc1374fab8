import type { Tool } from '@modelcontextprotocol/server';
import type { Workbench } from '../core/workbench.js';
import { managementToolDefinitions } from './management-tools.js';
import { metaToolDefinitions } from './meta-tools.js';

type ToolSource = Pick<Workbench, 'catalogNames' | 'onCatalogChanged'>;

/**
 * The tools a surface lists: the two meta-tools, and the management tools when offered. Their enums carry the current
 * toolbox and toolset names: instructions cannot change after a config reload, but the tool list can, and the client
 * is told to fetch it again (see {@link SurfaceTools.onChanged}).
 */
export class SurfaceTools {
  private current: Tool[];
  /** The top-level tool names (they never change; only their parameters' enums do). */
  readonly names: readonly string[];
  private readonly listeners = new Set<() => void>();
  private readonly stopFollowing: () => void;

  constructor(
    private readonly workbench: ToolSource,
    private readonly management: boolean,
  ) {
    this.current = this.definitions();
    this.names = this.current.map((t) => t.name);
    this.stopFollowing = workbench.onCatalogChanged(() => {
      this.current = this.definitions();
      for (const listener of this.listeners) listener();
    });
  }

  /** The tool list as of the latest catalog change. */
  list(): Tool[] {
    return this.current;
  }

  /** Calls the listener after the tool list changed (a config reload renamed toolboxes); returns the unsubscribe. */
  onChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Stops following the workbench and forgets every listener. */
  close(): void {
    this.stopFollowing();
    this.listeners.clear();
  }

  private definitions(): Tool[] {
    return [
      ...metaToolDefinitions(this.workbench.catalogNames()),
      ...(this.management ? managementToolDefinitions(this.workbench.catalogNames()) : []),
    ];
  }
}
