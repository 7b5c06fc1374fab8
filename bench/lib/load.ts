import { performance } from 'node:perf_hooks';

/** One call to measure; it must throw when the call did not do what was asked (so errors are never timed as work). */
export type Call = () => Promise<unknown>;

/** Runs `call` sequentially `count` times (or until `deadline`, a performance.now() value) and returns each latency in ms. */
export async function latencies(call: Call, count: number, deadline = Number.POSITIVE_INFINITY): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count && performance.now() < deadline; i++) {
    const start = performance.now();
    await call();
    out.push(performance.now() - start);
  }
  return out;
}

export interface Throughput {
  calls: number;
  elapsedMs: number;
  perSecond: number;
}

/**
 * Keeps `concurrency` calls in flight until `total` have completed (or `deadline` passes); calls per second over the
 * whole run.
 */
export async function throughput(call: Call, total: number, concurrency: number, deadline = Number.POSITIVE_INFINITY): Promise<Throughput> {
  let started = 0;
  let done = 0;
  const start = performance.now();
  const worker = async (): Promise<void> => {
    while (started < total && performance.now() < deadline) {
      started++;
      await call();
      done++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  const elapsedMs = performance.now() - start;
  return { calls: done, elapsedMs, perSecond: (done * 1000) / elapsedMs };
}

/**
 * Measures several variants in alternating blocks (A B C A B C …) so that noise from other work on the machine falls
 * on all of them alike. Returns every latency per variant.
 */
export async function interleavedLatencies<K extends string>(
  variants: Record<K, Call>,
  perVariant: number,
  blocks: number,
  deadline = Number.POSITIVE_INFINITY,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(variants) as K[];
  const out = {} as Record<K, number[]>;
  for (const key of keys) out[key] = [];
  const blockSize = Math.ceil(perVariant / blocks);
  for (let b = 0; b < blocks && performance.now() < deadline; b++) {
    for (const key of keys) out[key].push(...(await latencies(variants[key], blockSize, deadline)));
  }
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
