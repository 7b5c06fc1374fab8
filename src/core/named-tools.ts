import type { Answer, FullEntry } from '../catalog/catalog-index.js';
import type { CatalogTool, ToolboxCatalog } from '../catalog/toolbox-catalog.js';
import { cutClientText } from '../shared/client-text.js';
import { compileGlob } from '../shared/glob.js';
import { disabledNote } from './tool-entry.js';

/** What named tools are picked from: a view's entries and catalogs, and for a toolset which names belong to it. */
export interface NamedToolsSource {
  entries: readonly FullEntry[];
  catalogs: readonly ToolboxCatalog[];
  member?: (name: string) => boolean;
}

/**
 * `open_toolbox {tools: [...]}`: the entries of the named tools (canonical, bare, `-`/`_` variants, globs) in the order
 * asked, each once, and the names that matched nothing with the closest enabled names. A disabled (or held) tool named
 * exactly comes back in `not_found` with `disabled`: why, and what would enable it.
 */
export function namedTools(source: NamedToolsSource, names: readonly string[]): { entries: FullEntry[]; notFound: NonNullable<Answer['not_found']> } {
  const byName = new Map(source.entries.map((e) => [e.name, e]));
  const member = source.member ?? (() => true);
  const picked = new Map<string, FullEntry>();
  const notFound: NonNullable<Answer['not_found']> = [];
  for (const name of names) {
    let found: CatalogTool[] = [];
    if (/[*?]/.test(name)) {
      const match = compileGlob(name);
      found = source.catalogs.flatMap((c) => c.tools.filter((t) => member(t.name) && (match(t.name) || match(t.tool.name))));
      if (found.length === 0) notFound.push({ name: cutClientText(name), suggestions: [] });
    } else {
      const suggestions: string[] = [];
      let disabled: string | undefined;
      for (const catalog of source.catalogs) {
        const lookup = catalog.find(name);
        if ('found' in lookup) found.push(lookup.found);
        else if ('ambiguous' in lookup) found.push(...lookup.ambiguous);
        else if ('hidden' in lookup) disabled ??= disabledNote(lookup.hidden.name, lookup.hidden.visibility.reason, lookup.hidden.visibility.source);
        else suggestions.push(...lookup.suggestions.filter(member));
      }
      found = found.filter((t) => member(t.name));
      if (found.length === 0) notFound.push({ name: cutClientText(name), suggestions: suggestions.slice(0, 5), ...(disabled !== undefined && { disabled }) });
    }
    for (const t of found) {
      const entry = byName.get(t.name);
      if (entry) picked.set(entry.name, entry);
    }
  }
  return { entries: [...picked.values()], notFound };
}
