import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchQuery } from './queries.js';

/**
 * The held-out third of the benchmark queries: the ids in held-out.json, chosen once, before any tuning, as the
 * third of the queries with the smallest SHA-256 of their text (`node --import tsx bench/search/split.ts` wrote it).
 * Tuning looks at the rest only.
 */
const file = join(dirname(fileURLToPath(import.meta.url)), 'held-out.json');

export function heldOutIds(): Set<string> {
  return new Set(JSON.parse(readFileSync(file, 'utf8')) as string[]);
}

export function chooseHeldOut(queries: readonly BenchQuery[]): string[] {
  const hashed = queries.map((q) => ({ id: q.id, h: createHash('sha256').update(q.query).digest('hex') }));
  hashed.sort((a, b) => (a.h < b.h ? -1 : 1));
  return hashed
    .slice(0, Math.round(queries.length / 3))
    .map((x) => x.id)
    .sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { QUERIES } = await import('./queries.js');
  const { writeFileSync, existsSync } = await import('node:fs');
  if (existsSync(file)) throw new Error('held-out.json exists: the split is chosen once');
  writeFileSync(file, `${JSON.stringify(chooseHeldOut(QUERIES))}\n`);
}
