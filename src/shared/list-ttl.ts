/**
 * The longest a downstream server's `ttlMs` hint counts for (README "Caching hints"): 24 hours. The protocol allows any
 * non-negative integer, but a list is never taken as fresh for longer than a day — and a hint past the largest date
 * (`Number.MAX_SAFE_INTEGER` ms) could not even be written down as one.
 */
export const MAX_TTL_MS = 24 * 60 * 60 * 1000;

/** A server's `ttlMs` as the workbench honours it: a finite non-negative number, at most {@link MAX_TTL_MS}; else undefined. */
export function honouredTtl(ttlMs: unknown): number | undefined {
  if (typeof ttlMs !== 'number' || !(ttlMs >= 0)) return undefined;
  return Math.min(ttlMs, MAX_TTL_MS);
}
