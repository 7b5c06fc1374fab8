/**
 * A small line diff in unified format (`---`/`+++` headers, `@@ -a,b +c,d @@` hunks, three lines of context), for
 * showing what `migrate` would change in a config file. Config files are small; the longest-common-subsequence
 * table is bounded, and beyond the bound the whole file is shown as replaced (still correct, just less minimal).
 */
const CONTEXT = 3;
const MAX_CELLS = 25_000_000;

type Op = { kind: ' ' | '-' | '+'; line: string };

/** The unified diff from `before` to `after`, or '' when they are equal. Labels go into the `---`/`+++` lines. */
export function unifiedDiff(before: string, after: string, beforeLabel: string, afterLabel: string): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = diffLines(a, b);
  const out = [`--- ${beforeLabel}`, `+++ ${afterLabel}`];
  for (const hunk of hunks(ops)) out.push(...hunk);
  return `${out.join('\n')}\n`;
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  // Common prefix and suffix first: migrations touch a few lines of a mostly unchanged file.
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const midA = a.slice(prefix, a.length - suffix);
  const midB = b.slice(prefix, b.length - suffix);
  const ops: Op[] = a.slice(0, prefix).map((line) => ({ kind: ' ', line }));
  ops.push(...middle(midA, midB));
  ops.push(...a.slice(a.length - suffix).map((line): Op => ({ kind: ' ', line })));
  return ops;
}

function middle(a: readonly string[], b: readonly string[]): Op[] {
  if ((a.length + 1) * (b.length + 1) > MAX_CELLS) {
    return [...a.map((line): Op => ({ kind: '-', line })), ...b.map((line): Op => ({ kind: '+', line }))];
  }
  // lcs[i][j] = length of the LCS of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) {
      ops.push({ kind: '-', line: a[i++]! });
    } else {
      ops.push({ kind: '+', line: b[j++]! });
    }
  }
  while (i < a.length) ops.push({ kind: '-', line: a[i++]! });
  while (j < b.length) ops.push({ kind: '+', line: b[j++]! });
  return ops;
}

function hunks(ops: readonly Op[]): string[][] {
  const result: string[][] = [];
  const changed = ops.map((op, index) => (op.kind === ' ' ? -1 : index)).filter((index) => index >= 0);
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k]! - CONTEXT);
    let end = Math.min(ops.length, changed[k]! + CONTEXT + 1);
    // Merge changes whose context windows touch.
    while (k + 1 < changed.length && changed[k + 1]! - CONTEXT <= end) {
      k++;
      end = Math.min(ops.length, changed[k]! + CONTEXT + 1);
    }
    k++;
    let oldLine = 1;
    let newLine = 1;
    for (let n = 0; n < start; n++) {
      if (ops[n]!.kind !== '+') oldLine++;
      if (ops[n]!.kind !== '-') newLine++;
    }
    const body = ops.slice(start, end);
    const oldCount = body.filter((op) => op.kind !== '+').length;
    const newCount = body.filter((op) => op.kind !== '-').length;
    // As in GNU diff: an empty range is numbered by the line before it.
    const range = (line: number, count: number): string => `${count === 0 ? line - 1 : line},${count}`;
    result.push([`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`, ...body.map((op) => `${op.kind}${op.line}`)]);
  }
  return result;
}
