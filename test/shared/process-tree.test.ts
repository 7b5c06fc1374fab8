import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { descendantTable, processTable, signal, waitForExit } from '../../src/shared/process-tree.js';

describe('descendantTable (a process tree without reading the whole process table)', () => {
  it('finds the children and grandchildren the whole table shows, each with its parent, group and start time', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async () => {
    // A shell (leading its own group) that starts a sleeping grandchild in a session of its own, as a daemon does.
    const shell = spawn('/bin/sh', ['-c', 'setsid sleep 30 & sleep 30 & wait'], { stdio: 'ignore', detached: true });
    const root = shell.pid!;
    try {
      let found: Awaited<ReturnType<typeof descendantTable>>;
      // Until both sleeps have started and the first has left the shell's group (setsid): the tree then stands still,
      // so the whole table read after it shows the same (a loaded machine may show the child between fork and setsid).
      for (let i = 0; i < 400; i++) {
        found = await descendantTable([root]);
        if (found === undefined || (found.size >= 2 && [...found.values()].some((entry) => entry.pgid !== root))) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      if (found === undefined) return; // a kernel without children lists: the reaper reads the whole table instead
      const table = await processTable({ complete: true });
      const expected = new Map<number, unknown>();
      const queue = [root];
      while (queue.length > 0) {
        const parent = queue.shift()!;
        for (const [pid, entry] of table) {
          if (entry.ppid !== parent) continue;
          expected.set(pid, entry);
          queue.push(pid);
        }
      }
      assert.ok(expected.size >= 2, `the shell's children: ${[...expected.keys()].join(', ')}`);
      assert.deepEqual(new Map([...found!].filter(([pid]) => expected.has(pid))), expected);
      assert.deepEqual([...found!.keys()].sort(), [...expected.keys()].sort());
      assert.ok([...found!.values()].some((entry) => entry.pgid !== root), 'the setsid child is in a group of its own');
    } finally {
      const pids = [...((await descendantTable([root])) ?? new Map()).keys(), root];
      for (const pid of pids) signal(pid, 'SIGKILL');
      await waitForExit(pids, 2_000);
    }
  });
});
