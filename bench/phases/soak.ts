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
/** The floor is the lowest sample over this many calls at the end of the warm-up and at the end of the soak. */
const FLOOR_WINDOW = 1000;

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
 * target is judged on the floor of the sawtooth (lowest sample over the last 1,000 calls of each stage): a leak
 * lifts the floor; garbage awaiting collection does not.
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
    const window = Math.max(1, Math.round(ctx.n(FLOOR_WINDOW, 200) / SAMPLE_EVERY));

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
    const floorBefore = Math.min(...warmup.samples.slice(-window));
    const floorAfter = Math.min(...soak.samples.slice(-window));
    const floorGrowth = ((floorAfter - floorBefore) / floorBefore) * 100;
    const quarter = Math.max(1, Math.floor(soak.samples.length / 4));
    const floors = [0, 1, 2, 3].map((q) => Math.min(...soak.samples.slice(q * quarter, (q + 1) * quarter)));

    section.intro =
      `use_tool on server-everything's echo at concurrency ${CONCURRENCY}, GC never forced. RSS (VmRSS of the workbench) is read after ` +
      `${warmup.done} warm-up calls and after ${soak.done} more (each after ${SETTLE_MS} ms idle), and sampled every ${SAMPLE_EVERY} calls throughout.`;
    section.tables.push({
      head: ['Workbench RSS', 'After warm-up', `After ${soak.done.toLocaleString('en-US')} more calls`, 'Growth'],
      rows: [
        [`floor: lowest sample over the last ${window * SAMPLE_EVERY} calls (judged)`, fmtBytes(floorBefore), fmtBytes(floorAfter), fmtPct(floorGrowth)],
        [`single read after ${SETTLE_MS} ms idle`, fmtBytes(before), fmtBytes(after), fmtPct(growth)],
        ['range of all samples', `${fmtBytes(Math.min(...warmup.samples))} – ${fmtBytes(Math.max(...warmup.samples))}`, `${fmtBytes(Math.min(...soak.samples))} – ${fmtBytes(Math.max(...soak.samples))}`, ''],
      ],
    });
    section.tables.push({
      head: ['Floor per quarter of the soak', 'Q1', 'Q2', 'Q3', 'Q4'],
      rows: [['lowest RSS sample', ...floors.map(fmtBytes)]],
    });
    section.targets.push(target(`workbench RSS floor growth over ${soak.done.toLocaleString('en-US')} calls`, fmtPct(floorGrowth), '≤ +10%', floorGrowth <= 10));
    section.notes.push(
      `Calls per second during the soak: ${Math.round((soak.done * 1000) / elapsed)}. A single read lands anywhere on the GC sawtooth, so its growth figure ` +
        '(shown for completeness) swings by tens of percent between runs with no leak; a leak shows as floors rising quarter after quarter.',
    );
    if (soak.done < total) section.notes.push(`The phase hit its time budget after ${soak.done} of ${total} calls.`);
    section.key = `RSS floor ${fmtBytes(floorBefore)} → ${fmtBytes(floorAfter)} (${fmtPct(floorGrowth)}); single reads ${fmtBytes(before)} → ${fmtBytes(after)} (${fmtPct(growth)}); quarter floors ${floors.map(fmtBytes).join(', ')}`;
    return section;
  } finally {
    await wb.close();
  }
}
