import type { Tool } from '@modelcontextprotocol/client';
import type { CatalogChange } from '../catalog/catalog-index.js';
import { firstOf, moreCount } from '../shared/first-of.js';

/** Most names listed per kind of change in one notice: enough to act on, bounded for the model's context. */
const MAX_NAMES = 20;

/**
 * What one client session was last shown of each server's tools, and how the live lists differ from it. A toolbox
 * answered from the catalog cache shows the last known list; when the live one turns out different (or a server's
 * list changes later), the session's next open_toolbox answer says so briefly (README "Catalog cache").
 */
export class ShownLists {
  /** `toolbox/server` → the list last shown (by reference: compared only when a live list arrives). */
  private readonly shown = new Map<string, readonly Tool[]>();
  private readonly changes = new Map<string, CatalogChange>();
  /** The notices the last `take` told, as they were before being cut to what the session may see. */
  private taken = new Map<string, CatalogChange>();

  /** An answer showed these tools of the server. */
  record(toolbox: string, server: string, tools: readonly Tool[]): void {
    this.shown.set(`${toolbox}/${server}`, tools);
  }

  /** A live list of the server arrived: a difference from what was shown becomes a notice. */
  observe(toolbox: string, server: string, tools: readonly Tool[] | undefined): void {
    const key = `${toolbox}/${server}`;
    const shown = this.shown.get(key);
    if (!shown || !tools || shown === tools) return;
    const change = diffTools(shown, tools);
    if (change.added.length + change.removed.length + change.changed.length === 0) {
      this.changes.delete(key);
      return;
    }
    this.changes.set(key, { toolbox, server, ...change });
  }

  /**
   * A config edit removed servers (or their toolboxes): the tools the session was shown of each (as `visible`, the
   * rules before the edit, let it see them) are a notice of removal, as a changed list's are; nothing of them is kept.
   */
  dropRemoved(exists: (toolbox: string, server: string) => boolean, visible: (toolbox: string, server: string, tool: string) => boolean): void {
    for (const [key, tools] of this.shown) {
      const slash = key.indexOf('/');
      const [toolbox, server] = [key.slice(0, slash), key.slice(slash + 1)];
      if (exists(toolbox, server)) continue;
      this.shown.delete(key);
      const removed = tools.map((t) => t.name).filter((name) => visible(toolbox, server, name));
      if (removed.length > 0) this.changes.set(key, { toolbox, server, added: [], removed, changed: [] });
      else this.changes.delete(key);
    }
  }

  /**
   * The notices not told yet (then forgotten), naming only tools `visible` lets the session see: a tool the user
   * disabled (or a toolset leaves out) is not announced as added, changed or removed.
   */
  take(visible: (toolbox: string, server: string, tool: string) => boolean = () => true): CatalogChange[] {
    if (this.changes.size === 0) return [];
    const all = [...this.changes.values()];
    this.taken = new Map(this.changes);
    this.changes.clear();
    const told: CatalogChange[] = [];
    for (const change of all) {
      const seen = (names: string[]): string[] => capped(names.filter((name) => visible(change.toolbox, change.server, name)));
      const [added, removed, changed] = [seen(change.added), seen(change.removed), seen(change.changed)];
      if (added.length + removed.length + changed.length > 0) told.push({ ...change, added, removed, changed });
    }
    return told;
  }

  /**
   * Notices the last `take` gave that the answer had no room for (its head counted them away): they are told again in
   * the next answer, unless the server's list changed again meanwhile (that newer notice stands).
   */
  putBack(untold: readonly CatalogChange[]): void {
    for (const { toolbox, server } of untold) {
      const key = `${toolbox}/${server}`;
      const raw = this.taken.get(key);
      if (raw && !this.changes.has(key)) this.changes.set(key, raw);
    }
  }
}

function diffTools(before: readonly Tool[], after: readonly Tool[]): Omit<CatalogChange, 'toolbox' | 'server'> {
  const old = new Map(before.map((t) => [t.name, JSON.stringify(t)]));
  const now = new Map(after.map((t) => [t.name, JSON.stringify(t)]));
  const added = [...now.keys()].filter((name) => !old.has(name));
  const removed = [...old.keys()].filter((name) => !now.has(name));
  const changed = [...now.keys()].filter((name) => old.has(name) && old.get(name) !== now.get(name));
  return { added, removed, changed };
}

/** At most {@link MAX_NAMES} names, then one `(N more)` entry counting those left out (open_toolbox shows them all). */
function capped(names: string[]): string[] {
  return firstOf(names, MAX_NAMES, moreCount);
}
