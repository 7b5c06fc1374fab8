// Preloaded into a workbench by the soak (`node --expose-gc --import heap-probe.mjs …`): on SIGUSR2 it runs a full
// garbage collection and writes the live heap size to the file named by WB_BENCH_HEAP_PROBE. The workbench itself is
// unchanged; only the bench's probe run loads this.
import { writeFileSync } from 'node:fs';

const out = process.env.WB_BENCH_HEAP_PROBE;
if (out && typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    globalThis.gc();
    const { heapUsed, rss } = process.memoryUsage();
    writeFileSync(out, JSON.stringify({ heapUsed, rss }));
  });
}
