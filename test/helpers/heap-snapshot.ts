import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from './wait-for.js';

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

/**
 * A heap snapshot of a process started with `--heapsnapshot-signal=SIGUSR2` and `dir` as its working directory: sends
 * the signal and waits for the `.heapsnapshot` file to be complete (V8 collects garbage first, so only what is still
 * reachable is in it). Returns its path.
 */
export async function signalledSnapshot(pid: number, dir: string): Promise<string> {
  const before = new Set((await readdir(dir)).filter((f) => f.endsWith('.heapsnapshot')));
  process.kill(pid, 'SIGUSR2');
  let path = '';
  let size = -1;
  await waitFor(
    async () => {
      const file = path || (await readdir(dir)).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
      if (!file) return false;
      path = path || join(dir, file);
      // Written as it is taken: complete once its size holds still and its last byte closes the JSON object.
      const handle = await open(path, 'r');
      try {
        const now = (await handle.stat()).size;
        const last = Buffer.alloc(1);
        if (now > 0) await handle.read(last, 0, 1, now - 1);
        const done = now === size && last.toString() === '}';
        size = now;
        return done;
      } finally {
        await handle.close();
      }
    },
    { timeoutMs: 120_000, what: `a heap snapshot of process ${pid}` },
  );
  return path;
}
