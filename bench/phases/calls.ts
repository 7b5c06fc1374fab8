import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { interleavedLatencies, latencies, throughput, type Call, type Throughput } from '../lib/load.js';
import { callOk, useTool } from '../lib/mcp.js';
import type { PhaseContext } from '../lib/phase.js';
import { closeAll, cpuMs, servers, startDirect, startWorkbench, type ServerEntry } from '../lib/processes.js';
import { emptySection } from '../lib/phase.js';
import { target, type Section } from '../lib/report.js';
import { fmtMs, fmtRate, fmtRatio, median, quantile, ratio } from '../lib/stats.js';

/** A proxy that only copies lines (bench/lib/null-proxy.mjs): what the extra process hop costs by itself. */
const NULL_PROXY = fileURLToPath(new URL('../lib/null-proxy.mjs', import.meta.url));

interface Plan {
  warmup: number;
  latency: number;
  blocks: number;
  c1: { rounds: number; calls: number };
  c32: { rounds: number; calls: number };
}

interface Measured {
  latency: { direct: number[]; workbench: number[]; nullProxy: number[] };
  c1: { direct: Throughput[]; workbench: Throughput[] };
  c32: { direct: Throughput[]; workbench: Throughput[] };
  /** Throughput at concurrency 32 through the minimal line-pipe proxy. */
  c32NullProxy: Throughput[];
  /** CPU ms per call during the concurrency-32 rounds. */
  cpu: { directServer: number; viaServer: number; workbench: number };
  truncated: boolean;
}

/**
 * Starts the server directly and behind a workbench, then measures both in alternating blocks: sequential latency,
 * throughput at concurrency 1 and 32, and the CPU each process spent per call during the concurrency-32 rounds.
 */
async function compare(
  ctx: PhaseContext,
  entry: ServerEntry,
  tool: string,
  args: Record<string, unknown>,
  plan: Plan,
): Promise<Measured> {
  const direct = await startDirect(`direct ${tool}`, entry);
  const nullProxy = await startDirect(`null proxy ${tool}`, { ...entry, command: process.execPath, args: [NULL_PROXY, entry.command, ...entry.args] });
  const wb = await startWorkbench(`workbench ${tool}`, { toolboxes: { bench: { mcpServers: { srv: entry } } } });
  await callOk(wb.client, 'open_toolbox', { toolbox_name: 'bench' });
  const canonical = `bench__srv__${tool}`;
  const callDirect: Call = () => callOk(direct.client, tool, args);
  const callWb: Call = () => useTool(wb.client, 'bench', canonical, args);
  const callNull: Call = () => callOk(nullProxy.client, tool, args);
  const [serverPid] = await wb.descendants();
  if (serverPid === undefined) throw new Error('the workbench has no downstream child after open_toolbox');

  ctx.log(`  warm-up (${plan.warmup} calls each, then concurrent)`);
  await latencies(callDirect, plan.warmup, ctx.deadline);
  await latencies(callWb, plan.warmup, ctx.deadline);
  await latencies(callNull, plan.warmup, ctx.deadline);
  await throughput(callDirect, plan.warmup, 32, ctx.deadline);
  await throughput(callWb, plan.warmup, 32, ctx.deadline);

  ctx.log(`  latency (${plan.latency} sequential calls each, ${plan.blocks} alternating blocks)`);
  const lat = await interleavedLatencies({ direct: callDirect, workbench: callWb, nullProxy: callNull }, plan.latency, plan.blocks, ctx.deadline);

  const rounds = async (concurrency: number, spec: { rounds: number; calls: number }, cpu?: Measured['cpu']) => {
    const out = { direct: [] as Throughput[], workbench: [] as Throughput[] };
    let cpuDirect = 0;
    let cpuServer = 0;
    let cpuWb = 0;
    for (let r = 0; r < spec.rounds && performance.now() < ctx.deadline; r++) {
      const d0 = cpuMs(direct.pid);
      out.direct.push(await throughput(callDirect, spec.calls, concurrency, ctx.deadline));
      cpuDirect += cpuMs(direct.pid) - d0;
      const s0 = cpuMs(serverPid);
      const w0 = cpuMs(wb.pid);
      out.workbench.push(await throughput(callWb, spec.calls, concurrency, ctx.deadline));
      cpuServer += cpuMs(serverPid) - s0;
      cpuWb += cpuMs(wb.pid) - w0;
    }
    if (cpu) {
      const sum = (list: Throughput[]) => list.reduce((a, t) => a + t.calls, 0);
      cpu.directServer = cpuDirect / sum(out.direct);
      cpu.viaServer = cpuServer / sum(out.workbench);
      cpu.workbench = cpuWb / sum(out.workbench);
    }
    return out;
  };
  ctx.log(`  throughput at concurrency 1 (${plan.c1.rounds} rounds of ${plan.c1.calls} calls each)`);
  const c1 = await rounds(1, plan.c1);
  ctx.log(`  throughput at concurrency 32 (${plan.c32.rounds} rounds of ${plan.c32.calls} calls each)`);
  const cpu = { directServer: Number.NaN, viaServer: Number.NaN, workbench: Number.NaN };
  const c32 = await rounds(32, plan.c32, cpu);
  const c32NullProxy: Throughput[] = [];
  for (let r = 0; r < plan.c32.rounds && performance.now() < ctx.deadline; r++) {
    c32NullProxy.push(await throughput(callNull, plan.c32.calls, 32, ctx.deadline));
  }
  const truncated = performance.now() >= ctx.deadline;
  await closeAll();
  return { latency: lat, c1, c32, c32NullProxy, cpu, truncated };
}

const medianRate = (list: Throughput[]): number => median(list.map((t) => t.perSecond));
const calls = (list: Throughput[]): number => list.reduce((a, t) => a + t.calls, 0);
const us = (ms: number): string => (Number.isFinite(ms) ? `${(ms * 1000).toFixed(0)} µs` : 'n/a');

function rows(m: Measured): string[][] {
  const p50d = median(m.latency.direct);
  const p50w = median(m.latency.workbench);
  const p99d = quantile(m.latency.direct, 0.99);
  const p99w = quantile(m.latency.workbench, 0.99);
  return [
    ['latency p50', fmtMs(p50d), fmtMs(p50w), fmtRatio(ratio(p50w, p50d)), `${m.latency.direct.length} / ${m.latency.workbench.length} calls`],
    ['latency p99', fmtMs(p99d), fmtMs(p99w), fmtRatio(ratio(p99w, p99d)), ''],
    [
      'throughput, concurrency 1',
      fmtRate(medianRate(m.c1.direct)),
      fmtRate(medianRate(m.c1.workbench)),
      fmtRatio(ratio(medianRate(m.c1.workbench), medianRate(m.c1.direct))),
      `median of ${m.c1.direct.length} rounds, ${calls(m.c1.direct)} / ${calls(m.c1.workbench)} calls`,
    ],
    [
      'throughput, concurrency 32',
      fmtRate(medianRate(m.c32.direct)),
      fmtRate(medianRate(m.c32.workbench)),
      fmtRatio(ratio(medianRate(m.c32.workbench), medianRate(m.c32.direct))),
      `median of ${m.c32.direct.length} rounds, ${calls(m.c32.direct)} / ${calls(m.c32.workbench)} calls`,
    ],
    [
      'CPU per call at concurrency 32',
      `server ${us(m.cpu.directServer)}`,
      `server ${us(m.cpu.viaServer)} + workbench ${us(m.cpu.workbench)}`,
      '',
      'from /proc/<pid>/stat (10 ms ticks)',
    ],
    [
      'latency p50 via a minimal line-pipe proxy',
      fmtMs(p50d),
      fmtMs(median(m.latency.nullProxy)),
      fmtRatio(ratio(median(m.latency.nullProxy), p50d)),
      `the floor for any stdio proxy in Node; workbench ÷ it: ${fmtRatio(ratio(p50w, median(m.latency.nullProxy)))}`,
    ],
    [
      'throughput at concurrency 32 via the minimal proxy',
      fmtRate(medianRate(m.c32.direct)),
      fmtRate(medianRate(m.c32NullProxy)),
      fmtRatio(ratio(medianRate(m.c32NullProxy), medianRate(m.c32.direct))),
      `workbench ÷ it: ${fmtRatio(ratio(medianRate(m.c32.workbench), medianRate(m.c32NullProxy)))}`,
    ],
  ];
}

const HEAD = ['Metric', 'Direct', 'Through workbench', 'Workbench ÷ direct', 'Samples'];

/** The table, the two headline ratios, the truncation note and the one-line key, as both call phases report them. */
function report(section: Section, m: Measured, label: string): { p50: number; c32: number } {
  section.tables.push({ head: HEAD, rows: rows(m) });
  const p50 = ratio(median(m.latency.workbench), median(m.latency.direct));
  const c32 = ratio(medianRate(m.c32.workbench), medianRate(m.c32.direct));
  if (m.truncated) section.notes.push('The phase hit its time budget; loops were cut short (see sample counts).');
  section.key = `${label} p50 ${fmtMs(median(m.latency.direct))} → ${fmtMs(median(m.latency.workbench))} (${fmtRatio(p50)}), c32 ${fmtRate(medianRate(m.c32.direct))} → ${fmtRate(medianRate(m.c32.workbench))} (${fmtRatio(c32)})`;
  return { p50, c32 };
}

/** Issue 7 "call overhead": server-everything's echo through use_tool vs direct. */
export async function echoPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Call overhead: server-everything `echo`');
  const m = await compare(ctx, servers.everything(), 'echo', { message: 'hello, workbench' }, {
    warmup: ctx.n(500, 50),
    latency: ctx.n(2000, 200),
    blocks: 4,
    c1: { rounds: 3, calls: ctx.n(1000, 100) },
    c32: { rounds: 3, calls: ctx.n(4000, 320) },
  });
  section.intro =
    '`use_tool {toolbox_name, tool_name: "bench__srv__echo", arguments: {message}}` through the workbench vs `tools/call echo` ' +
    'on the same server command started directly. Latency: sequential calls after a warm-up. Throughput: calls per second with 1 ' +
    'and 32 calls in flight. The last two rows put a proxy that only copies lines between the pipes in the same place: the cost ' +
    'of the extra process hop itself on this machine, which no stdio proxy can go below.';
  const { p50, c32 } = report(section, m, 'echo');
  section.notes.push(
    `The minimal line-pipe proxy alone is ${fmtRatio(ratio(median(m.latency.nullProxy), median(m.latency.direct)))} of direct at p50; the workbench is ` +
      `${fmtRatio(ratio(median(m.latency.workbench), median(m.latency.nullProxy)))} of that floor.`,
  );
  section.targets.push(target('echo p50 latency, workbench ÷ direct', fmtRatio(p50), '≤ 2.2×', p50 <= 2.2));
  section.targets.push(target('echo throughput at concurrency 32, workbench ÷ direct', fmtRatio(c32), '≥ 0.5×', c32 >= 0.5));
  return section;
}

/** The same with a 1 MiB result: the fixture's `huge {bytes: 1048576}`. */
export async function bigResultPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Call overhead: 1 MiB result (fixture `huge`)');
  const bytes = 1024 * 1024;
  const m = await compare(ctx, servers.fixture(), 'huge', { bytes }, {
    warmup: ctx.n(20, 5),
    latency: ctx.n(200, 20),
    blocks: 4,
    c1: { rounds: 2, calls: ctx.n(50, 10) },
    c32: { rounds: 2, calls: ctx.n(128, 32) },
  });
  section.intro =
    'One text item of 1,048,576 characters per call (about 1 MiB of JSON on each stdio hop). Same method as above; no target in ' +
    'issue 7 beyond reporting it.';
  report(section, m, '1MiB');
  return section;
}
