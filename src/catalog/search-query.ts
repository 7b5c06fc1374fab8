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
  /** Quoted text that reads as one name (no space in it), as written: answers say when no tool has it. */
  quoted: string[];
  /** `server:NAME` / `toolbox:NAME`, as matchers of the lower-case name. */
  server?: (name: string) => boolean;
  toolbox?: (name: string) => boolean;
  /** The qualifiers as written (`server:memory`), for answers that say what they matched. */
  qualifiers: string[];
}

const QUALIFIER = /(?:^|\s)(server|toolbox):("[^"]*"|\S+)/gi;

/**
 * Values a person pastes into a request name what the tool must take, not what it does: `https://…` means a tool that
 * takes a URL, `notes.txt` one that takes a file. Their own words are mostly noise to a ranking ("https", "com", the
 * "test" of test@example.com, the "notes" of notes.txt that reads like memory's "nodes"), so an email address and a
 * URL stand for their kind alone, and a file name for its extension and the word "file". In order: email addresses,
 * URLs (a scheme, `www.`, or a host under a common top-level domain), then file names (a name and an extension of 2–5
 * letters, or a glob such as `*.ts`; a capitalised `Name.js` is a library, not a file). A `#name` after a word that
 * says where ("what did people say in #general", "post it to #dev-ops") is a chat channel: the word "channel" joins its
 * name, unless the query says "channel" already. Not `#42`, a hex colour, `C#`, a URL's `#fragment`, or `click #submit`.
 */
// Each starts only where a token starts (the beginning, a space or an opening bracket or quote), and its parts are
// split by characters they cannot hold, so a long query is read in linear time.
const EMAIL = /(?<![^\s("'`<[])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const URL_LIKE = /(?<![^\s("'`<[])(?:(?:https?:\/\/|www\.)\S+|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|ai|co|app|edu|gov)(?:\/\S*)?(?![\w.]))/gi;
/** `in #general`, `to the #dev-ops`: a `#name` after a word that says where (a hex colour such as `#ffcc00` is not one). */
const CHANNEL = /\b((?:in|to|on|from|into|across|at|of)\s+(?:(?:the|our|my|your)\s+)?)#(?![0-9a-f]{3}(?:[0-9a-f]{3}(?:[0-9a-f]{2})?)?(?![\w-]))([A-Za-z][\w-]*)/gi;
const FILE_NAME = /(?<![^\s("'`<[])[\w*-]+(?:\.[\w*-]+)*\.([A-Za-z][A-Za-z0-9]{1,4})(?=$|[\s)"'`>\],;:!?]|\.(?:\s|$))/g;

/** The text the query's words are read from, with pasted values standing for their kind (see EMAIL and below). */
function valuesByKind(text: string): string {
  return text
    .replace(EMAIL, ' email ')
    .replace(URL_LIKE, ' url ')
    .replace(CHANNEL, (_: string, where: string, name: string) => ` ${where}${/\bchannels?\b/i.test(text) ? '' : 'channel '}${name} `)
    .replace(FILE_NAME, (name: string, extension: string) =>
      // A name needs a letter or a glob (not "40.7128"); a capitalised Name.js is a library.
      !/[A-Za-z*]/.test(name.slice(0, -extension.length - 1)) || (extension.toLowerCase() === 'js' && /^[A-Z]/.test(name)) ? name : ` ${extension} file `,
    );
}

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
  const quoted: string[] = [];
  for (const m of rest.matchAll(/"([^"]+)"/g)) {
    const text = m[1]!.trim();
    if (text) exactNames.push(text.toLowerCase(), words(text).join('_'));
    if (text && !/\s/.test(text)) quoted.push(text);
  }
  const ws = words(valuesByKind(rest));
  if (ws.length > 0) exactNames.push(rest.trim().replace(/^"|"$/g, '').toLowerCase(), ws.join('_'));
  return {
    words: ws,
    openEnded: /[A-Za-z0-9]$/.test(rest),
    exactNames: [...new Set(exactNames)],
    quoted,
    qualifiers,
    ...(server && { server }),
    ...(toolbox && { toolbox }),
  };
}
