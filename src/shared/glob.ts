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
