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

/**
 * Issue 7 "soak": workbench RSS after a warm-up of 2,000 calls and after 20,000 more, GC never forced (the workbench
 * runs exactly as users run it). Without forced GC, RSS follows V8's heap sawtooth: garbage piles up between major
 * collections and a single read can land anywhere on it (we saw the same process read 102 MiB and 146 MiB with the
 * same 16.5 MiB live heap). So besides the two reads after a short idle, RSS is sampled every 100 calls and the
 * target is judged on the floor of the sawtooth (lowest sample) in the first vs the last quarter of the soak: a leak
 * lifts the floor; garbage awaiting collection does not. (The heap is still sizing up during the first quarter, so
 * this errs towards reporting growth.)
 */
export async function soakPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Soak: memory over 20,000 calls');
  const wb = await startWorkbench('workbench soak', { toolboxes: { bench: { mcpServers: { everything: servers.everything() } } } });
  try {
    await callOk(wb.client, 'open_toolbox', { toolbox_name: 'bench' });
    let n = 0;
    const call: Call = () => useTool(wb.client, 'bench', 'bench__everything__echo', { message: `soak ${n++}` });
    const warmupCount = ctx.n(2000, 200);
    const total = ctx.n(20_000, 2000);

    ctx.log(`  warm-up ${warmupCount} calls`);
    const warmup = await sampled(call, warmupCount, wb.pid, ctx.deadline);
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
    const floorGrowth = ((floors[3]! - floors[0]!) / floors[0]!) * 100;
    const quarterCalls = quarter * SAMPLE_EVERY;

    section.intro =
      `use_tool on server-everything's echo at concurrency ${CONCURRENCY}, GC never forced. RSS (VmRSS of the workbench) is read after ` +
      `${warmup.done} warm-up calls and after ${soak.done} more (each after ${SETTLE_MS} ms idle), and sampled every ${SAMPLE_EVERY} calls throughout.`;
    section.tables.push({
      head: ['Workbench RSS', 'Before', 'After', 'Growth'],
      rows: [
        [`single reads: after the warm-up vs after ${soak.done.toLocaleString('en-US')} more calls (${SETTLE_MS} ms idle each)`, fmtBytes(before), fmtBytes(after), fmtPct(growth)],
        [`floor (lowest sample) over the first vs the last ${quarterCalls.toLocaleString('en-US')} calls of the soak (judged)`, fmtBytes(floors[0]!), fmtBytes(floors[3]!), fmtPct(floorGrowth)],
        ['floor per quarter of the soak', floors.map(fmtBytes).join(' → '), '', ''],
        ['range of all samples (warm-up; soak)', `${fmtBytes(Math.min(...warmup.samples))} – ${fmtBytes(Math.max(...warmup.samples))}`, `${fmtBytes(Math.min(...soak.samples))} – ${fmtBytes(Math.max(...soak.samples))}`, ''],
      ],
    });
    section.targets.push(target(`workbench RSS floor growth over ${soak.done.toLocaleString('en-US')} calls (first vs last quarter)`, fmtPct(floorGrowth), '≤ +10%', floorGrowth <= 10));
    section.notes.push(
      `Calls per second during the soak: ${Math.round((soak.done * 1000) / elapsed)}. A single read lands anywhere on the GC sawtooth, so its growth figure ` +
        '(shown for completeness) swings by tens of percent between runs with no leak; a leak shows as floors rising quarter after quarter.',
    );
    if (soak.done < total) section.notes.push(`The phase hit its time budget after ${soak.done} of ${total} calls.`);
    section.key = `RSS floor Q1 → Q4 ${fmtBytes(floors[0]!)} → ${fmtBytes(floors[3]!)} (${fmtPct(floorGrowth)}); single reads ${fmtBytes(before)} → ${fmtBytes(after)} (${fmtPct(growth)}); quarter floors ${floors.map(fmtBytes).join(', ')}`;
    return section;
  } finally {
    await wb.close();
  }
}
