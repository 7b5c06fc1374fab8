import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarise, type CpuProfile, type ProfileSummary } from '../lib/cpuprofile.js';
import { sleep, throughput } from '../lib/load.js';
import { callOk, useTool } from '../lib/mcp.js';
import { emptySection, type PhaseContext } from '../lib/phase.js';
import { servers, startWorkbench } from '../lib/processes.js';
import type { Section, Table } from '../lib/report.js';
import { fmtMs } from '../lib/stats.js';

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Runs a workbench under `node --cpu-prof` through an echo run at concurrency 32 and a 1 MiB run, then summarises
 * the profile over exactly those windows (start-up and shutdown excluded). The .cpuprofile is kept for DevTools.
 */
export async function profilePhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('CPU profile of the workbench');
  const dir = await mkdtemp(join(tmpdir(), 'wb-bench-profile-'));
  const wb = await startWorkbench('workbench profile', { toolboxes: { bench: { mcpServers: { ev: servers.everything(), fx: servers.fixture() } } } }, {
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  });
  const windows: { label: string; from: number; to: number; calls: number; ms: number }[] = [];
  try {
    await callOk(wb.client, 'open_toolbox', { toolbox_name: 'bench' });
    const echo = () => useTool(wb.client, 'bench', 'bench__ev__echo', { message: 'hello, workbench' });
    const huge = () => useTool(wb.client, 'bench', 'bench__fx__huge', { bytes: 1024 * 1024 });
    ctx.log('  warm-up');
    await throughput(echo, ctx.n(2000, 200), 32, ctx.deadline);
    await throughput(huge, ctx.n(20, 4), 4, ctx.deadline);
    await sleep(200);
    const run = async (label: string, call: () => Promise<unknown>, total: number, concurrency: number) => {
      ctx.log(`  profiling ${label}`);
      const from = nowUs();
      const t = await throughput(call, total, concurrency, ctx.deadline);
      windows.push({ label, from, to: nowUs(), calls: t.calls, ms: t.elapsedMs });
      await sleep(100);
    };
    await run('echo, concurrency 1', echo, ctx.n(3000, 300), 1);
    await run('echo, concurrency 32', echo, ctx.n(10_000, 1000), 32);
    await run('1 MiB result, concurrency 4', huge, ctx.n(100, 10), 4);
  } finally {
    await wb.close();
  }
  const file = (await readdir(dir)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`the workbench wrote no .cpuprofile to ${dir} (did it exit cleanly?)`);
  const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile;
  section.intro = `The workbench process under \`node --cpu-prof\`; self time is the time a function was on top of the stack. Profile kept at \`${join(dir, file)}\` (open it in Chrome DevTools › Performance).`;
  for (const w of windows) {
    const s: ProfileSummary = summarise(profile, w.from, w.to, 20);
    const perCall = (ms: number): string => `${((ms * 1000) / Math.max(1, w.calls)).toFixed(1)} µs`;
    section.notes.push(
      `${w.label}: ${w.calls} calls in ${fmtMs(w.ms)}; the profile window holds ${fmtMs(s.windowMs)}, of which the workbench was busy ${fmtMs(s.busyMs)} (${perCall(s.busyMs)} per call).`,
    );
    const areas: Table = {
      head: [`${w.label}: self time by area`, 'ms', '% of busy', 'per call'],
      rows: s.areas.map((a) => [a.area, a.ms.toFixed(0), `${a.pct.toFixed(1)}%`, perCall(a.ms)]),
    };
    const self: Table = {
      head: [`${w.label}: top self time`, 'Where', 'Area', '% of busy', 'per call'],
      rows: s.self.map((f) => [f.name, f.where, f.area, `${f.pct.toFixed(1)}%`, perCall(f.ms)]),
    };
    const inclusive: Table = {
      head: [`${w.label}: top inclusive time (workbench, SDK, zod, ajv)`, 'Where', '% of busy', 'per call'],
      rows: s.inclusive.map((f) => [f.name, f.where, `${f.pct.toFixed(1)}%`, perCall(f.ms)]),
    };
    section.tables.push(areas, self, inclusive);
  }
  section.key = `profile at ${join(dir, file)}`;
  return section;
}
