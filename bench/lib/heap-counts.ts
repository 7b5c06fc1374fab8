import { readFile } from 'node:fs/promises';

/** Live objects of one constructor name in a V8 heap snapshot: how many, and their shallow size in bytes. */
export interface ConstructorCount {
  count: number;
  size: number;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Counts the object, closure and array nodes of a `.heapsnapshot` file by their name (a constructor's). */
export async function countByConstructor(path: string): Promise<Map<string, ConstructorCount>> {
  const snap = JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const counted = new Set(['object', 'closure', 'array', 'native']);
  const counts = new Map<string, ConstructorCount>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    if (!counted.has(type)) continue;
    const name = `${type === 'closure' ? 'closure ' : ''}${snap.strings[snap.nodes[i + nameAt]!]!}`.slice(0, 80);
    const entry = counts.get(name) ?? { count: 0, size: 0 };
    entry.count++;
    entry.size += snap.nodes[i + sizeAt]!;
    counts.set(name, entry);
  }
  return counts;
}

/** The `limit` names whose count grew most from `before` to `after`. */
export function topGrowers(before: Map<string, ConstructorCount>, after: Map<string, ConstructorCount>, limit = 15): string[] {
  const rows = [...after].map(([name, a]) => {
    const b = before.get(name) ?? { count: 0, size: 0 };
    return { name, dc: a.count - b.count, ds: a.size - b.size, b: b.count, a: a.count };
  });
  rows.sort((x, y) => y.dc - x.dc);
  return rows.slice(0, limit).map((r) => `${r.name.padEnd(60)} ${String(r.b).padStart(8)} -> ${String(r.a).padStart(8)} (${r.dc >= 0 ? '+' : ''}${r.dc}, ${r.ds >= 0 ? '+' : ''}${r.ds} B)`);
}
