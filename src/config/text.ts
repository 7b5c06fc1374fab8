/**
 * Small shared pieces of config handling: the name rule for toolboxes and servers (mirrored by
 * workbench-config.schema.json), an edit distance for "did you mean" suggestions, and a plain-object guard.
 */

/** Toolbox and server names: letters, digits, `-` and single `_`; never `__`, never a leading or trailing `_`. */
export const NAME_PATTERN = /^(?!_)(?!.*__)[A-Za-z0-9_-]+(?<!_)$/;

export const NAME_RULE = 'names use letters, digits, "-" and single "_"; they never contain "__" and never start or end with "_"';

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  // Three rolling rows: the transposition step looks two rows back.
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let curr = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    curr[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(prev[j]! + 1, curr[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      curr[j] = value;
    }
    [before, prev, curr] = [prev, curr, before];
  }
  return prev[b.length]!;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
