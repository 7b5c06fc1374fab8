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
      if (found.length === 0) {
        // A glob that matches only disabled tools says so, with why the first of them is disabled.
        const hidden = source.catalogs.flatMap((c) => c.hidden.filter((t) => member(t.name) && (match(t.name) || match(t.tool.name))));
        const first = hidden[0];
        const disabled = first && `It matches only disabled tools (${hidden.length}), such as: ${disabledNote(first.name, first.visibility.reason, first.visibility.source, first.visibility.user)}`;
        notFound.push({ name: cutClientText(name), suggestions: [], ...(disabled !== undefined && { disabled }) });
      }
    } else {
      const suggestions: string[] = [];
      let disabled: string | undefined;
      for (const catalog of source.catalogs) {
        const lookup = catalog.find(name);
        if ('found' in lookup) found.push(lookup.found);
        else if ('ambiguous' in lookup) found.push(...lookup.ambiguous);
        else if ('hidden' in lookup) disabled ??= disabledNote(lookup.hidden.name, lookup.hidden.visibility.reason, lookup.hidden.visibility.source, lookup.hidden.visibility.user);
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

/**
 * What an answer with names that matched nothing adds: the list, and, when some of them have neither a closest name
 * nor a reason, where to go instead (never a dead end).
 */
export function notFoundExtra(notFound: NonNullable<Answer['not_found']>): Partial<Answer> {
  if (notFound.length === 0) return {};
  const bare = notFound.some((n) => n.suggestions.length === 0 && n.disabled === undefined);
  return {
    not_found: notFound,
    ...(bare && {
      hint: 'Names in not_found match no enabled tool here: call open_toolbox without tools to see every name, or with query:"words" to search (a name that begins with another toolbox\'s name is opened with that toolbox_name).',
    }),
  };
}
