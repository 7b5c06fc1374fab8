/**
 * Name globs for tool patterns: `*` matches any run of characters (including none), `?` exactly one; everything
 * else is literal. Tool names are not paths, so unlike picomatch/minimatch there is nothing special about `/` or a
 * leading `.` — `github__*` must match `github__repo/issues` too.
 */
export type NameMatcher = (name: string) => boolean;

export function compileGlob(pattern: string): NameMatcher {
  if (!/[*?]/.test(pattern)) return (name) => name === pattern;
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*').replace(/\?/g, '[\\s\\S]');
  const regex = new RegExp(`^${source}$`);
  return (name) => regex.test(name);
}

/** A matcher that is true when any of the patterns matches; `undefined` when there are none. */
export function compileGlobs(patterns: readonly string[]): NameMatcher | undefined {
  if (patterns.length === 0) return undefined;
  const matchers = patterns.map((p) => ({ p, m: compileGlob(p) }));
  return (name) => matchers.some(({ m }) => m(name));
}

/** The first pattern that matches, for telling the user *which* rule applied. */
export function firstMatch(patterns: readonly string[], names: readonly string[]): string | undefined {
  for (const p of patterns) {
    const m = compileGlob(p);
    if (names.some(m)) return p;
  }
  return undefined;
}
