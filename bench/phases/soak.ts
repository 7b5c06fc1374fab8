import { performance } from 'node:perf_hooks';
import { sleep, throughput } from '../lib/load.js';
import { callOk, useTool } from '../lib/mcp.js';
import { emptySection, type PhaseContext } from '../lib/phase.js';
import { rssBytes, servers, startWorkbench } from '../lib/processes.js';
import { target, type Section } from '../lib/report.js';
import { fmtBytes, fmtPct, median } from '../lib/stats.js';

const CONCURRENCY = 8;
const SETTLE_MS = 1500;

/**
 * Issue 7 "soak": workbench RSS after a warm-up of 2,000 calls and after 20,000 more (each read after a short idle,
 * without forcing GC: the workbench runs exactly as users run it).
 */
export async function soakPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Soak: memory over 20,000 calls');
  const wb = await startWorkbench('workbench soak', { toolboxes: { bench: { mcpServers: { everything: servers.everything() } } } });
  try {
    await callOk(wb.client, 'open_toolbox', { toolbox_name: 'bench' });
    let n = 0;
    const call = () => useTool(wb.client, 'bench', 'bench__everything__echo', { message: `soak ${n++}` });
    const warmup = ctx.n(2000, 200);
    const total = ctx.n(20_000, 2000);
    const chunks = 10;
    ctx.log(`  warm-up ${warmup} calls`);
    await throughput(call, warmup, CONCURRENCY, ctx.deadline);
    await sleep(SETTLE_MS);
    const before = rssBytes(wb.pid);
    const samples: number[] = [];
    let done = 0;
    const start = performance.now();
    ctx.log(`  ${total} calls at concurrency ${CONCURRENCY}`);
    for (let c = 0; c < chunks && performance.now() < ctx.deadline; c++) {
      done += (await throughput(call, Math.ceil(total / chunks), CONCURRENCY, ctx.deadline)).calls;
      samples.push(rssBytes(wb.pid));
    }
    const elapsed = performance.now() - start;
    await sleep(SETTLE_MS);
    const after = rssBytes(wb.pid);
    const growth = ((after - before) / before) * 100;
    // A leak grows with the number of calls; V8 sizing its young generation moves RSS up and down by several MiB
    // between reads. The trend of the samples (first three vs last three, medians) tells them apart.
    const early = median(samples.slice(0, 3));
    const late = median(samples.slice(-3));
    const trend = ((late - early) / early) * 100;
    section.intro =
      `use_tool on server-everything's echo at concurrency ${CONCURRENCY}. RSS of the workbench process (VmRSS) read after ` +
      `${warmup} warm-up calls and ${SETTLE_MS} ms idle, then after ${done} more calls and ${SETTLE_MS} ms idle. GC is not forced.`;
    section.tables.push({
      head: ['Workbench RSS', 'Value'],
      rows: [
        [`after ${warmup} warm-up calls`, fmtBytes(before)],
        [`after ${done} more calls`, fmtBytes(after)],
        ['growth', fmtPct(growth)],
        [`samples every ${Math.ceil(total / chunks)} calls (min – max)`, `${fmtBytes(Math.min(...samples))} – ${fmtBytes(Math.max(...samples))}`],
        [`trend: median of the last 3 samples vs the first 3`, `${fmtBytes(early)} → ${fmtBytes(late)} (${fmtPct(trend)})`],
        ['calls per second during the soak', `${Math.round((done * 1000) / elapsed)}/s`],
      ],
    });
    section.targets.push(target(`workbench RSS growth over ${done.toLocaleString('en-US')} calls`, fmtPct(growth), '≤ +10%', growth <= 10));
    section.notes.push(
      'RSS is read without forcing GC, so a single pair of reads moves by a few percent with V8\'s heap sizing; a leak shows as a steady rise across the samples.',
    );
    if (done < total) section.notes.push(`The phase hit its time budget after ${done} of ${total} calls.`);
    section.key = `RSS ${fmtBytes(before)} → ${fmtBytes(after)} (${fmtPct(growth)}) over ${done} calls`;
    return section;
  } finally {
    await wb.close();
  }
}
