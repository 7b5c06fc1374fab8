import { boundedEditDistance } from '../shared/edit-distance.js';
import { compileGlob } from '../shared/glob.js';
import { NAME_SEPARATOR, parseToolName } from './names.js';
import { closestNames, type SuggestionCandidate } from './toolbox-catalog.js';

/** A tool as these checks see it: its canonical name and its parts. */
export interface KnownTool {
  name: string;
  toolbox: string;
  server: string;
  original_name: string;
}

export interface UnmatchedName {
  name: string;
  /** The nearest canonical names (for a name) or corrected patterns that match something (for a glob); best first. */
  suggestions: string[];
}

/**
 * The names and globs among `names` that match none of `tools`, each with up to `count` suggestions. A canonical name
 * gets the closest tool names (see closestNames); a glob gets itself with its toolbox and server parts corrected to the
 * nearest pair that makes it match (`dev__memroy__*` → `dev__memory__*`), else the tools nearest its literal text.
 */
export function unmatchedNames(names: readonly string[], tools: readonly KnownTool[], count = 5): UnmatchedName[] {
  const canonical = tools.map((t) => t.name);
  const candidates: SuggestionCandidate[] = tools.map((t) => ({ name: t.name, canonical: t.name.toLowerCase(), bare: t.original_name.toLowerCase() }));
  const unmatched: UnmatchedName[] = [];
  for (const name of names) {
    const match = compileGlob(name);
    if (canonical.some(match)) continue;
    const suggestions = isGlob(name) ? correctedGlobs(name, tools, canonical, count) : [];
    const literal = name.replace(/[*?]/g, '');
    if (suggestions.length === 0 && literal.length > 0) suggestions.push(...closestNames(literal, candidates, count));
    unmatched.push({ name, suggestions });
  }
  return unmatched;
}

/** How far a toolbox or server part of a glob may be from a real one and still be offered as its correction. */
const MAX_PART_DISTANCE = 3;

function correctedGlobs(pattern: string, tools: readonly KnownTool[], canonical: readonly string[], count: number): string[] {
  const parts = parseToolName(pattern);
  if (!parts) return [];
  const scored = new Map<string, number>();
  const pairs = new Set(tools.map((t) => `${t.toolbox}${NAME_SEPARATOR}${t.server}`));
  for (const pair of pairs) {
    const [toolbox, server] = pair.split(NAME_SEPARATOR) as [string, string];
    const toolboxFix = partDistance(parts.toolbox, toolbox);
    const serverFix = partDistance(parts.server, server);
    if (toolboxFix === undefined || serverFix === undefined) continue;
    const fixed = [isGlob(parts.toolbox) ? parts.toolbox : toolbox, isGlob(parts.server) ? parts.server : server, parts.tool].join(NAME_SEPARATOR);
    if (fixed === pattern || !canonical.some(compileGlob(fixed))) continue;
    scored.set(fixed, Math.min(scored.get(fixed) ?? Infinity, toolboxFix + serverFix));
  }
  return [...scored]
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, count)
    .map(([name]) => name);
}

/** 0 when a glob part matches `actual`, the edit distance when a literal part is near it, else undefined. */
function partDistance(part: string, actual: string): number | undefined {
  if (isGlob(part)) return compileGlob(part)(actual) ? 0 : undefined;
  const d = boundedEditDistance(part.toLowerCase(), actual.toLowerCase(), MAX_PART_DISTANCE);
  return d > MAX_PART_DISTANCE ? undefined : d;
}

const isGlob = (name: string): boolean => /[*?]/.test(name);
