import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { listDescendants, signal } from '../../src/shared/process-tree.js';
import { paths } from '../../test/helpers/workbench-process.js';
import { latencies } from '../lib/load.js';
import { useTool } from '../lib/mcp.js';
import type { PhaseContext } from '../lib/phase.js';
import { emptySection } from '../lib/phase.js';
import { NULL_PROXY, servers, startDirect } from '../lib/processes.js';
import type { Section } from '../lib/report.js';
import { fmtRatio, ratio } from '../lib/stats.js';


/** Instructions one process ran over the measured calls: its main thread, and all its threads (JIT, GC helpers). */
interface Count {
  mainPerCall: number;
  allPerCall: number;
  /** The same, less what the process ran in an idle window as long as the calls took (timers, file polls). */
  mainPerCallBusy: number;
  allPerCallBusy: number;
  calls: number;
}

function hasValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The `totals:` (else `summary:`) figure of one callgrind output file. */
async function totalOf(file: string): Promise<number> {
  const text = await readFile(file, 'utf8');
  const match = /^totals:\s+(\d+)/m.exec(text) ?? /^summary:\s+(\d+)/m.exec(text);
  if (!match) throw new Error(`no totals in callgrind output ${file}`);
  return Number(match[1]);
}

/**
 * Runs `target` (a node script and its arguments) under callgrind, warms it up, zeroes the counters, makes `calls`
 * use_tool calls, dumps, and reads the instruction counts of that window. Then it zeroes again, lets the process sit
 * idle as long as the calls took, and dumps that window too: what a process runs on a clock (the workbench's file polls
 * and sweeps) grows with the wall time the calls took under valgrind, and so with the machine's load; less the idle
 * window, the figure is the calls' own work, repeatable where timings are not (to within what the JIT and the garbage
 * collector decide differently from run to run).
 */
async function count(ctx: PhaseContext, label: string, target: string[], warmup: number, calls: number): Promise<Count> {
  const dir = await mkdtemp(join(tmpdir(), 'wb-bench-cg-'));
  try {
    const out = join(dir, 'cg.out');
    const running = await startDirect(`${label} under callgrind`, {
      command: 'valgrind',
      args: ['--tool=callgrind', '--smc-check=all-non-file', '--separate-threads=yes', `--callgrind-out-file=${out}`, process.execPath, ...target],
    }, CALLGRIND_CONNECT_MS);
    let descendants: number[] = [];
    try {
      const call = () => useTool(running.client, 'bench', 'bench__srv__echo', { message: 'hello, workbench' });
      ctx.log(`  ${label}: ${warmup} warm-up calls under callgrind`);
      await latencies(call, warmup);
      execFileSync('callgrind_control', ['-z', String(running.pid)], { stdio: 'ignore' });
      const started = performance.now();
      await latencies(call, calls);
      const took = performance.now() - started;
      execFileSync('callgrind_control', ['-d', String(running.pid)], { stdio: 'ignore' });
      execFileSync('callgrind_control', ['-z', String(running.pid)], { stdio: 'ignore' });
      await delay(took);
      execFileSync('callgrind_control', ['-d', String(running.pid)], { stdio: 'ignore' });
      descendants = await listDescendants(running.pid).catch(() => []);
    } finally {
      await running.close();
      for (const pid of descendants) signal(pid, 'SIGKILL');
    }
    // Dump 1 is the calls, dump 2 the idle window; cg.out.N-01 is the main thread.
    const calling = await dumpTotals(dir, 1, label);
    const idle = await dumpTotals(dir, 2, label);
    return {
      mainPerCall: calling.main / calls,
      allPerCall: calling.all / calls,
      mainPerCallBusy: (calling.main - idle.main) / calls,
      allPerCallBusy: (calling.all - idle.all) / calls,
      calls,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Dump `n` of one callgrind run: its main thread's instructions and all its threads'. */
async function dumpTotals(dir: string, n: number, label: string): Promise<{ main: number; all: number }> {
  const files = (await readdir(dir)).filter((f) => new RegExp(`^cg\\.out\\.${n}-\\d+$`).test(f));
  const main = files.find((f) => f.endsWith('-01'));
  if (!main) throw new Error(`callgrind wrote no dump ${n} for ${label} (files: ${files.join(', ') || 'none'})`);
  const all = (await Promise.all(files.map((f) => totalOf(join(dir, f))))).reduce((a, b) => a + b, 0);
  return { main: await totalOf(join(dir, main)), all };
}

/** Start-up under valgrind is some 50 times slower than without; on a busy machine it can pass the SDK's 60 s. */
const CALLGRIND_CONNECT_MS = 5 * 60_000;

const thousands = (n: number): string => `${(n / 1000).toFixed(1)} K`;
const row = (name: string, c: Count, counted: string): string[] => [name, thousands(c.mainPerCall), thousands(c.allPerCall), thousands(c.mainPerCallBusy), thousands(c.allPerCallBusy), counted];

/**
 * Instructions per forwarded `echo` (callgrind): the workbench against the minimal rewriting proxy, each under
 * valgrind in the same run. A figure that timing noise cannot move, for comparing builds.
 */
export async function instructionsPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Instructions per forwarded call (callgrind)');
  section.intro =
    'Instructions executed per `use_tool` → `echo` call, counted by valgrind\'s callgrind over the measured calls only (after a ' +
    'warm-up, so the JIT has settled): the workbench against the minimal rewriting proxy of the call-overhead table. Unlike ' +
    'timings, counts do not move with what else the machine is doing; they are the figure to compare builds by. "Main thread" is ' +
    'the event loop, the work on the latency path; "all threads" adds V8\'s compiler and garbage-collector helpers.';
  if (!hasValgrind()) {
    section.notes.push('Skipped: valgrind (with callgrind_control) is not on PATH. On Debian: apt-get install valgrind.');
    return section;
  }
  const warmup = ctx.n(3000, 300);
  const calls = ctx.n(1000, 100);
  const dir = await mkdtemp(join(tmpdir(), 'wb-bench-cg-config-'));
  try {
    const entry = servers.everything();
    const config = join(dir, 'workbench-config.json');
    await writeFile(config, JSON.stringify({ toolboxes: { bench: { mcpServers: { srv: entry } } } }));
    const [workbench, proxy] = await Promise.all([
      count(ctx, 'workbench', [paths.cli, 'serve', '--config', config, '--state-file', join(dir, 'state.json'), '--no-catalog-cache'], warmup, calls),
      count(ctx, 'rewriting proxy', [NULL_PROXY, '--rewrite', entry.command, ...entry.args], warmup, calls),
    ]);
    section.tables.push({
      head: ['Process', 'Main thread per call', 'All threads per call', 'Less idle: main thread', 'Less idle: all threads', 'Calls counted'],
      rows: [
        row('workbench', workbench, `${workbench.calls} after ${warmup} warm-up`),
        row('minimal rewriting proxy', proxy, `${proxy.calls} after ${warmup} warm-up`),
        [
          'workbench ÷ proxy',
          fmtRatio(ratio(workbench.mainPerCall, proxy.mainPerCall)),
          fmtRatio(ratio(workbench.allPerCall, proxy.allPerCall)),
          fmtRatio(ratio(workbench.mainPerCallBusy, proxy.mainPerCallBusy)),
          fmtRatio(ratio(workbench.allPerCallBusy, proxy.allPerCallBusy)),
          '',
        ],
      ],
    });
    section.notes.push(
      '"Less idle": the same count less what the process ran while idle for as long as the calls took (its timers and file polls), ' +
        'which otherwise grows with the wall time the calls take under valgrind, and so with the machine\'s load. Compare builds by it.',
    );
    section.key = `main thread ${thousands(workbench.mainPerCallBusy)} vs proxy ${thousands(proxy.mainPerCallBusy)} instructions per call, less idle work`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return section;
}
