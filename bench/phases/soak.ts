import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { sleep, throughput, type Call } from '../lib/load.js';
import { callOk, useTool } from '../lib/mcp.js';
import { emptySection, type PhaseContext } from '../lib/phase.js';
import { rssBytes, servers, startWorkbench } from '../lib/processes.js';
import { target, type Section } from '../lib/report.js';
import { fmtBytes, fmtPct } from '../lib/stats.js';

const CONCURRENCY = 8;
const SETTLE_MS = 1500;
/** RSS is sampled after every this many calls. */
const SAMPLE_EVERY = 100;

/** Runs `count` calls in slices of SAMPLE_EVERY and samples RSS after each; returns the samples and calls done. */
async function sampled(call: Call, count: number, pid: number, deadline: number): Promise<{ samples: number[]; done: number }> {
  const samples: number[] = [];
  let done = 0;
  while (done < count && performance.now() < deadline) {
    done += (await throughput(call, Math.min(SAMPLE_EVERY, count - done), CONCURRENCY, deadline)).calls;
    samples.push(rssBytes(pid));
  }
  return { samples, done };
}

/** Warm-up windows: calls per window, the most windows, and how close three windows' RSS floors in a row must be to call it steady. */
const WARMUP_WINDOW = 2000;
const WARMUP_WINDOWS_MAX = 50;
const STEADY_PCT = 2;
const HEAP_PROBE = fileURLToPath(new URL('../lib/heap-probe.mjs', import.meta.url));

/**
 * Workbench RSS once warmed up and after 100,000 more calls, GC never forced (the workbench runs
 * exactly as users run it). Without forced GC, RSS follows V8's heap sawtooth: garbage piles up between major
 * collections and a single read can land anywhere on it (we saw the same process read 102 MiB and 146 MiB with the
 * same 16.5 MiB live heap). So besides the two reads after a short idle, RSS is sampled every 100 calls and the
 * target is judged on the floor of the sawtooth (lowest sample) in the first vs the second half of the soak: a leak
 * lifts the floor; garbage awaiting collection does not.
 *
 * A fresh process also grows while V8 sizes its young generation for the allocation rate it sees (seen here: about
 * 10 MiB over the first few thousand calls, then flat), and until its first major collection, which V8 schedules by
 * the live heap at start: with the MCP SDK v2 loaded (a larger live heap) that came only after some 70,000 calls here,
 * the floor rising until then and falling back at once. That is start-up, not growth over use, so the warm-up runs in
 * windows of 2,000 calls until three windows in a row have RSS floors within 2% (at most 50 windows; the report says how
 * many it took and each window's floor).
 */
/** Warms a workbench up in windows until its RSS floor is steady (see soakPhase). */
async function warmUp(call: Call, window: number, pid: number, deadline: number): Promise<{ samples: number[]; done: number; floors: number[]; steady: boolean }> {
  const warmup = { samples: [] as number[], done: 0, floors: [] as number[], steady: false };
  while (warmup.floors.length < WARMUP_WINDOWS_MAX && performance.now() < deadline) {
    const slice = await sampled(call, window, pid, deadline);
    if (slice.samples.length === 0) break; // out of time budget
    warmup.samples.push(...slice.samples);
    warmup.done += slice.done;
    warmup.floors.push(Math.min(...slice.samples));
    // Three windows in a row within the band: a floor still rising 1–3% per window (before V8's first major
    // collection) never passes, where two neighbouring windows could.
    const recent = warmup.floors.slice(-3);
    if (recent.length === 3 && (Math.max(...recent) - Math.min(...recent)) / Math.min(...recent) <= STEADY_PCT / 100) {
      warmup.steady = true;
      break;
    }
  }
  return warmup;
}

/**
 * The live heap (after a forced full GC) of a second workbench, once warmed up and after the same soak: the direct
 * test for a leak, which RSS can only suggest. This workbench runs with --expose-gc and bench/lib/heap-probe.mjs.
 */
async function liveHeap(ctx: PhaseContext, window: number, total: number): Promise<{ before: number; after: number; calls: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'wb-bench-heap-'));
  const out = join(dir, 'heap.json');
  const wb = await startWorkbench('workbench heap probe', { toolboxes: { bench: { mcpServers: { everything: servers.everything() } } } }, {
    nodeArgs: ['--expose-gc', '--import', HEAP_PROBE],
    env: { WB_BENCH_HEAP_PROBE: out },
  });
  const read = async (): Promise<number> => {
    await rm(out, { force: true });
    process.kill(wb.pid, 'SIGUSR2');
    for (let i = 0; i < 100; i++) {
      await sleep(50);
      const text = await readFile(out, 'utf8').catch(() => '');
      if (text) return (JSON.parse(text) as { heapUsed: number }).heapUsed;
    }
    throw new Error('the heap probe did not answer (is bench/lib/heap-probe.mjs loaded?)');
  };
  try {
    await callOk(wb.client, 'open_toolbox', { toolbox_name: 'bench' });
    let n = 0;
    const call: Call = () => useTool(wb.client, 'bench', 'bench__everything__echo', { message: `probe ${n++}` });
    ctx.log('  heap probe: a second workbench, warmed up the same way, live heap after forced GC before and after the soak');
    await warmUp(call, window, wb.pid, ctx.deadline);
    const before = await read();
    const soak = await sampled(call, total, wb.pid, ctx.deadline);
    const after = await read();
    return { before, after, calls: soak.done };
  } finally {
    await wb.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function soakPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Soak: memory over 100,000 calls');
  const wb = await startWorkbench('workbench soak', { toolboxes: { bench: { mcpServers: { everything: servers.everything() } } } });
  try {
    await callOk(wb.client, 'open_toolbox', { toolbox_name: 'bench' });
    let n = 0;
    const call: Call = () => useTool(wb.client, 'bench', 'bench__everything__echo', { message: `soak ${n++}` });
    const window = ctx.n(WARMUP_WINDOW, 200);
    const total = ctx.n(100_000, 4000);

    ctx.log(`  warm-up in windows of ${window} calls until the RSS floor is steady`);
    const warmup = await warmUp(call, window, wb.pid, ctx.deadline);
    await sleep(SETTLE_MS);
    const before = rssBytes(wb.pid);
    ctx.log(`  ${total} calls at concurrency ${CONCURRENCY}, RSS sampled every ${SAMPLE_EVERY}`);
    const start = performance.now();
    const soak = await sampled(call, total, wb.pid, ctx.deadline);
    const elapsed = performance.now() - start;
    await sleep(SETTLE_MS);
    const after = rssBytes(wb.pid);

    const growth = ((after - before) / before) * 100;
    const quarter = Math.max(1, Math.floor(soak.samples.length / 4));
    const floors = [0, 1, 2, 3].map((q) => Math.min(...soak.samples.slice(q * quarter, (q + 1) * quarter)));
    // Judged on halves: each must span at least one of V8's major collections (every 40,000–50,000 calls here), or a
    // half could lie wholly on the rising slope of the sawtooth and show growth where there is none.
    const half = Math.max(1, Math.floor(soak.samples.length / 2));
    const halves = [Math.min(...soak.samples.slice(0, half)), Math.min(...soak.samples.slice(half))];
    const floorGrowth = ((halves[1]! - halves[0]!) / halves[0]!) * 100;
    const halfCalls = half * SAMPLE_EVERY;

    section.intro =
      `use_tool on server-everything's echo at concurrency ${CONCURRENCY}, GC never forced. RSS (VmRSS of the workbench) is read after ` +
      `${warmup.done} warm-up calls and after ${soak.done} more (each after ${SETTLE_MS} ms idle), and sampled every ${SAMPLE_EVERY} calls throughout. ` +
      `The warm-up ran until three windows of ${window} calls in a row had RSS floors within ${STEADY_PCT}%: ` +
      `${warmup.floors.map(fmtBytes).join(' → ')}${warmup.steady ? '' : ' (not steady by the end of the warm-up; the soak started anyway)'}.`;
    section.tables.push({
      head: ['Workbench RSS', 'Before', 'After', 'Growth'],
      rows: [
        [`single reads: after the warm-up vs after ${soak.done.toLocaleString('en-US')} more calls (${SETTLE_MS} ms idle each)`, fmtBytes(before), fmtBytes(after), fmtPct(growth)],
        [`floor (lowest sample) over the first vs the last ${halfCalls.toLocaleString('en-US')} calls of the soak (judged)`, fmtBytes(halves[0]!), fmtBytes(halves[1]!), fmtPct(floorGrowth)],
        ['floor per quarter of the soak', floors.map(fmtBytes).join(' → '), '', ''],
        ['range of all samples (warm-up; soak)', `${fmtBytes(Math.min(...warmup.samples))} – ${fmtBytes(Math.max(...warmup.samples))}`, `${fmtBytes(Math.min(...soak.samples))} – ${fmtBytes(Math.max(...soak.samples))}`, ''],
      ],
    });
    section.targets.push(target(`workbench RSS floor growth over ${soak.done.toLocaleString('en-US')} calls (first vs second half)`, fmtPct(floorGrowth), '≤ +10%', floorGrowth <= 10));
    section.notes.push(
      `Calls per second during the soak: ${Math.round((soak.done * 1000) / elapsed)}. A single read lands anywhere on the GC sawtooth, so its growth figure ` +
        '(shown for completeness) swings by tens of percent between runs with no leak; a leak shows as floors rising half after half.',
    );
    if (soak.done < total) section.notes.push(`The phase hit its time budget after ${soak.done} of ${total} calls.`);
    section.key = `RSS floor first → second half ${fmtBytes(halves[0]!)} → ${fmtBytes(halves[1]!)} (${fmtPct(floorGrowth)}); single reads ${fmtBytes(before)} → ${fmtBytes(after)} (${fmtPct(growth)}); quarter floors ${floors.map(fmtBytes).join(', ')}`;
  } finally {
    await wb.close();
  }
  const heap = await liveHeap(ctx, ctx.n(WARMUP_WINDOW, 200), ctx.n(20_000, 2000));
  const heapGrowth = ((heap.after - heap.before) / heap.before) * 100;
  section.tables[0]!.rows.push([
    `live heap after a forced full GC (second workbench, --expose-gc): warmed up vs after ${heap.calls.toLocaleString('en-US')} more calls`,
    fmtBytes(heap.before),
    fmtBytes(heap.after),
    fmtPct(heapGrowth),
  ]);
  section.key += `; live heap ${fmtBytes(heap.before)} → ${fmtBytes(heap.after)} (${fmtPct(heapGrowth)})`;
  return section;
}
