/**
 * Edit distance for "did you mean": optimal string alignment (Levenshtein plus adjacent transpositions, so `--tokne`
 * is one edit from `--token`), and a banded form whose cost is bounded by the distance that matters, for names a
 * client sends. Kept as our own (README "Libraries"): the maintained packages either count a transposition as two
 * edits (leven, fastest-levenshtein) or have no bound (damerau-levenshtein).
 */

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

/**
 * {@link editDistance} when it is at most `max`, else `max + 1`, in O(max × length) time and without work for pairs
 * whose lengths alone differ by more than `max`: only cells within `max` of the diagonal are computed, and the scan
 * stops once a whole row exceeds `max`. For suggestions, whose cost must not grow with what a client sends.
 */
export function boundedEditDistance(a: string, b: string, max: number): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const over = max + 1;
  const width = b.length + 1;
  let before = new Array<number>(width).fill(over);
  let prev = new Array<number>(width).fill(over);
  let curr = new Array<number>(width).fill(over);
  for (let j = 0; j <= Math.min(b.length, max); j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - max);
    const to = Math.min(b.length, i + max);
    curr.fill(over);
    if (i <= max) curr[0] = i;
    let rowMin = curr[0]!;
    for (let j = from; j <= to; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(prev[j]! + 1, curr[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      curr[j] = Math.min(value, over);
      if (curr[j]! < rowMin) rowMin = curr[j]!;
    }
    if (rowMin > max) return over;
    [before, prev, curr] = [prev, curr, before];
  }
  return Math.min(prev[b.length]!, over);
}

/**
 * The candidate nearest to `word` (case-insensitive) when it is within a small edit distance — 1 for words of up to 4
 * characters, else a third of the length, at most 3 — for "did you mean" on commands and options. Ties go to the
 * first candidate given.
 */
export function nearestWord(word: string, candidates: readonly string[]): string | undefined {
  const target = word.toLowerCase();
  const max = target.length <= 4 ? 1 : Math.min(3, Math.floor(target.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = boundedEditDistance(target, candidate.toLowerCase(), max);
    if (distance <= max && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
