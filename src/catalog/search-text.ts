import { stemmer } from 'stemmer';

/**
 * Text analysis for tool search (README: "Search"): words split out of identifiers, English stop words dropped,
 * Porter stems from the `stemmer` package, so "screenshots", "screenshotting" and "screenshot" meet.
 */

/**
 * Function words of English that say nothing about what a tool does. General English only: no word here is aimed
 * at a server or a query, and verbs such as "get", "set" and "list" stay, since tool names are made of them.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just let me more most my myself no nor not now of off on once only or ' +
    'other our ours ourselves out over own please same she should so some such than that the their theirs them themselves ' +
    'then there these they this those through to too under until up very via was we were what when where which while who ' +
    'whom why will with would you your yours yourself yourselves'
  ).split(' '),
);

/**
 * Lower-case words of a text, with identifiers split into their parts: camelCase and PascalCase (acronyms kept
 * whole: `HTTPServer` → http, server), snake_case, kebab-case, dotted names, and letters from digits (`v2` → v, 2).
 */
export function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([A-Za-z])([0-9])/g, '$1 $2')
    .replace(/([0-9])([A-Za-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/** The Porter stem of a lower-case word (`creating`, `creates` → `creat`; `entities` → `entiti`). */
export function stem(word: string): string {
  return word.length <= 2 ? word : stemmer(word);
}

/** The stems of a text's words that are not stop words, in order, repeats kept. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) if (!STOP_WORDS.has(w)) out.push(stem(w));
  return out;
}
