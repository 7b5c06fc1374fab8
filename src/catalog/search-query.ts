import { compileGlob } from '../shared/glob.js';
import { words } from './search-text.js';

/** A search query taken apart (README: "Search"). */
export interface ParsedQuery {
  /** The query's words, in order, lower-case (stop words are dropped later, when they are stemmed). */
  words: string[];
  /** Whether the last word may still be being typed (nothing follows it), so it also matches words it begins. */
  openEnded: boolean;
  /** Lower-case names the query spells out: quoted text, and the whole query as a bare name (`read_file`). */
  exactNames: string[];
  /** `server:NAME` / `toolbox:NAME`, as matchers of the lower-case name. */
  server?: (name: string) => boolean;
  toolbox?: (name: string) => boolean;
  /** The qualifiers as written (`server:memory`), for answers that say what they matched. */
  qualifiers: string[];
}

const QUALIFIER = /(?:^|\s)(server|toolbox):("[^"]*"|\S+)/gi;

/**
 * Takes a query apart: `server:` and `toolbox:` qualifiers (a name or a `*` glob, case-insensitive), quoted names,
 * and the words that are left. Never throws: an empty or odd query gives no words.
 */
export function parseQuery(query: string): ParsedQuery {
  let server: ParsedQuery['server'];
  let toolbox: ParsedQuery['toolbox'];
  const qualifiers: string[] = [];
  const rest = query.replace(QUALIFIER, (whole: string, kind: string, value: string) => {
    qualifiers.push(whole.trim());
    const match = compileGlob(value.replace(/^"|"$/g, '').toLowerCase());
    const test = (name: string): boolean => match(name.toLowerCase());
    if (kind.toLowerCase() === 'server') server = test;
    else toolbox = test;
    return ' ';
  });
  const exactNames: string[] = [];
  for (const m of rest.matchAll(/"([^"]+)"/g)) {
    const text = m[1]!.trim();
    if (text) exactNames.push(text.toLowerCase(), words(text).join('_'));
  }
  const ws = words(rest);
  if (ws.length > 0) exactNames.push(rest.trim().replace(/^"|"$/g, '').toLowerCase(), ws.join('_'));
  return {
    words: ws,
    openEnded: /[A-Za-z0-9]$/.test(rest),
    exactNames: [...new Set(exactNames)],
    qualifiers,
    ...(server && { server }),
    ...(toolbox && { toolbox }),
  };
}
