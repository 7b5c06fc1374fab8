// Preloaded into a workbench by the soak (`node --expose-gc --import heap-probe.mjs …`): on SIGUSR2 it runs a full
// garbage collection and writes the live heap size to the file named by WB_BENCH_HEAP_PROBE. When a file named
// `<WB_BENCH_HEAP_PROBE>.snapshot` exists, it names where to write a heap snapshot too (taken after the collection);
// it is removed once the snapshot is written. The workbench itself is unchanged; only the bench's probe run loads this.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';

const out = process.env.WB_BENCH_HEAP_PROBE;
if (out && typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    globalThis.gc();
    const request = `${out}.snapshot`;
    if (existsSync(request)) {
      writeHeapSnapshot(readFileSync(request, 'utf8').trim());
      rmSync(request, { force: true });
    }
    const { heapUsed, rss } = process.memoryUsage();
    writeFileSync(out, JSON.stringify({ heapUsed, rss }));
  });
}
