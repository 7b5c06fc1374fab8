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

  /** The notices not told yet (then forgotten). */
  take(): CatalogChange[] {
    if (this.changes.size === 0) return [];
    const all = [...this.changes.values()];
    this.changes.clear();
    return all;
  }
}

function diffTools(before: readonly Tool[], after: readonly Tool[]): Omit<CatalogChange, 'toolbox' | 'server'> {
  const old = new Map(before.map((t) => [t.name, JSON.stringify(t)]));
  const now = new Map(after.map((t) => [t.name, JSON.stringify(t)]));
  const added = [...now.keys()].filter((name) => !old.has(name));
  const removed = [...old.keys()].filter((name) => !now.has(name));
  const changed = [...now.keys()].filter((name) => old.has(name) && old.get(name) !== now.get(name));
  return { added: capped(added), removed: capped(removed), changed: capped(changed) };
}

/** At most {@link MAX_NAMES} names, then one `(N more)` entry counting those left out (open_toolbox shows them all). */
function capped(names: string[]): string[] {
  return firstOf(names, MAX_NAMES, moreCount);
}
