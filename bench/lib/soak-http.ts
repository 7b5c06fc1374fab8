/**
 * The HTTP soak: `node --import tsx bench/lib/soak-http.ts [sessions=1200] [concurrency=6]` (after `npm run build`).
 *
 * Runs the built workbench with `serve --http` on loopback (under --expose-gc and bench/lib/heap-probe.mjs) with six
 * tokens, per-user (`${user:id}`) and `shared: true` servers side by side, and drives sessions of both client eras
 * and four capability sets through it (soak-http-session.ts), while the config file is edited (a toolbox added and
 * removed, disabledTools toggled) and the tool-state file is toggled. Every 100 sessions it lets the sessions drain
 * to the idle timeout and measures the workbench after a forced collection: heap used, RSS, open fds, child
 * processes and /healthz sessions; heap snapshots at session 200 and at the end are compared by constructor. Its
 * stderr is kept and its most repeated lines are reported. Not part of `npm test`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isOrphanWatchdog } from '../../src/clients/orphan-reaper.js';
import { listDescendants } from '../../src/shared/process-tree.js';
import { updateToolState } from '../../src/state/update.js';
import { createLogger } from '../../src/log.js';
import { countByConstructor, topGrowers } from '../../test/helpers/heap-snapshot.js';
import { CAPSETS, runSession, type Failures, type SessionPlan } from './soak-http-session.js';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const CLI = here('../../dist/cli/main.js');
const PROBE = here('./heap-probe.mjs');
const FIXTURE = here('../../test/fixtures/fixture-server.mjs');
const MODERN = here('../../test/fixtures/modern-server.mjs');
const EVERYTHING = here('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const MEMORY = here('../../node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const TOKENS = Array.from({ length: 6 }, (_, i) => `soak-user-${i}-${'0123456789abcdef'.repeat(2)}`);
const IDLE_SECONDS = 4;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function config(variant: number): unknown {
  const fixture = (...flags: string[]) => ({ command: process.execPath, args: [FIXTURE, ...flags], timeoutMs: 60_000 });
  const fx = {
    mcpServers: { shared: { ...fixture('--name', 'shared'), shared: true }, user: fixture('--name', 'u-${user:id}') },
    ...(variant % 2 === 1 ? { disabledTools: ['*huge*', '*crash*'] } : {}),
  };
  const one = (name: string, server: unknown) => ({ mcpServers: { [name]: server } });
  const extra = { mcpServers: { x: { ...fixture('--name', `extra${variant}`), shared: true } } };
  return {
    toolboxes: {
      fx,
      feat: one('f', fixture('--odd', '--resources', '--name', 'feat')),
      slow: one('s', fixture('--name', 'slow')),
      mem: one('m', { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: '${user:dir}/memory.jsonl' } }),
      ev: one('every', { command: process.execPath, args: [EVERYTHING, 'stdio'] }),
      mod: one('m', { command: process.execPath, args: [MODERN, '--dual'] }),
      ...(variant % 3 === 2 ? { extra } : {}),
    },
  };
}

interface Workbench {
  child: ChildProcess;
  url: string;
  origin: string;
}

async function start(dir: string, configPath: string, stderrPath: string): Promise<Workbench> {
  const args = ['--expose-gc', '--import', PROBE, CLI, 'serve', '--config', configPath, '--http', '0', '--session-idle-timeout', String(IDLE_SECONDS), '--max-sessions', '240'];
  const env = {
    PATH: process.env.PATH ?? '', HOME: dir, WORKBENCH_TOKEN: TOKENS.join(','), WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'),
    MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache'), WB_BENCH_HEAP_PROBE: join(dir, 'probe.json'),
  };
  const child = spawn(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const log = createWriteStream(stderrPath);
  let seen = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      if (seen.length < 20_000) seen += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+\/mcp)/.exec(seen);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`workbench exited ${code}: ${seen}`)));
  });
  return { child, url, origin: new URL(url).origin };
}

async function healthSessions(wb: Workbench): Promise<number> {
  const body = (await (await fetch(`${wb.origin}/healthz`)).json()) as { sessions: number };
  return body.sessions;
}

async function children(pid: number): Promise<number> {
  return (await listDescendants(pid)).filter((p) => !isOrphanWatchdog(p)).length;
}

interface Sample {
  sessions: number;
  heapMB: number;
  rssMB: number;
  fds: number;
  children: number;
  live: number;
  drainMs: number;
}

/** Waits for the sessions to drain (idle timeout) and the per-session servers to end, then probes after a GC. */
async function measure(wb: Workbench, dir: string, done: number, snapshot?: string): Promise<Sample> {
  const pid = wb.child.pid!;
  const began = Date.now();
  while (Date.now() - began < 90_000 && (await healthSessions(wb)) > 0) await sleep(250);
  let last = -1;
  for (let stable = 0; stable < 4 && Date.now() - began < 120_000; await sleep(500)) {
    const now = await children(pid);
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
  const probe = join(dir, 'probe.json');
  await rm(probe, { force: true });
  if (snapshot) await writeFile(`${probe}.snapshot`, snapshot);
  process.kill(pid, 'SIGUSR2');
  let heap: { heapUsed: number; rss: number } | undefined;
  for (let i = 0; i < 600 && !heap; i++, await sleep(200)) heap = await readFile(probe, 'utf8').then((t) => JSON.parse(t) as { heapUsed: number; rss: number }, () => undefined);
  if (!heap) throw new Error('the heap probe did not answer');
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  const mb = (n: number): number => Math.round((n / 1048576) * 10) / 10;
  return { sessions: done, heapMB: mb(heap.heapUsed), rssMB: mb(heap.rss), fds, children: last, live: await healthSessions(wb), drainMs: Date.now() - began };
}

function plan(n: number, url: string): SessionPlan {
  return {
    n, url,
    token: TOKENS[n % TOKENS.length]!,
    era: Math.floor(n / 3) % 2 === 0 ? 'legacy' : 'modern',
    caps: CAPSETS[Math.floor(n / 2) % CAPSETS.length]!,
    abandon: n % 5 === 2,
    cancelSlow: n % 3 === 1,
    // One per-session server besides fx's (a legacy session starts its own processes: keep the machine's load down).
    extra: (['feat', 'slow', 'mem', 'feat', 'mod', 'slow', 'ev', 'none'] as const)[Math.floor(n / 4) % 8]!,
  };
}

/** Runs sessions [from, to) with `concurrency` at a time; every 50 a config edit, every 20 a state toggle. */
async function churn(wb: Workbench, dir: string, configPath: string, from: number, to: number, concurrency: number, failures: Failures): Promise<void> {
  let next = from;
  const log = createLogger({ level: 'error' }, 'soak-toggler');
  const statePath = join(dir, 'tool-state.json');
  const worker = async (): Promise<void> => {
    while (next < to) {
      const n = next++;
      if (n % 50 === 25) await writeFile(configPath, JSON.stringify(config(Math.floor(n / 50) + 1), null, 2));
      if (n % 20 === 10) {
        const change = n % 40 === 10 ? { disable: ['feat__f__pid', 'fx__shared__image'] } : { enable: ['feat__f__pid', 'fx__shared__image'] };
        await updateToolState(statePath, change, { log, lockTimeoutMs: 60_000 }).catch((e: unknown) => failures.set(`state toggle: ${String(e)}`, 1));
      }
      await runSession(plan(n, wb.url), failures);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

function repeatedLines(text: string): string[] {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const key = line.replace(/[0-9a-f]{8,}/gi, '<id>').replace(/\d+/g, 'N').slice(0, 220);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([line, n]) => `${String(n).padStart(6)}  ${line}`);
}

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 1200);
  const concurrency = Number(process.argv[3] ?? 6);
  const dir = await mkdtemp(join(tmpdir(), 'wb-soak-http-'));
  const configPath = join(dir, 'workbench-config.json');
  const stderrPath = join(dir, 'workbench.stderr');
  await writeFile(configPath, JSON.stringify(config(0), null, 2));
  const wb = await start(dir, configPath, stderrPath);
  console.log(`soak: ${total} sessions, ${concurrency} at a time, dir ${dir}, pid ${wb.child.pid}`);
  const failures: Failures = new Map();
  const samples: Sample[] = [];
  let exited = false;
  wb.child.once('exit', (code, signal) => ((exited = true), console.log(`WORKBENCH EXITED ${code} ${signal}`)));
  const snapshots: Record<number, string> = { 200: join(dir, 's200.heapsnapshot'), [total]: join(dir, 'send.heapsnapshot') };
  samples.push(await measure(wb, dir, 0));
  for (let done = 0; done < total && !exited; done += 100) {
    await churn(wb, dir, configPath, done, Math.min(total, done + 100), concurrency, failures);
    const sample = await measure(wb, dir, Math.min(total, done + 100), snapshots[Math.min(total, done + 100)]);
    samples.push(sample);
    console.log(JSON.stringify(sample));
  }
  console.table(samples);
  console.log('failures by kind:');
  for (const [what, n] of [...failures].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(6)}  ${what}`);
  if (!exited && total >= 300) {
    console.log('top growers, session 200 -> end:');
    for (const row of topGrowers(await countByConstructor(snapshots[200]!), await countByConstructor(snapshots[total]!))) console.log(row);
  }
  wb.child.kill('SIGTERM');
  await new Promise((resolve) => (exited ? resolve(undefined) : wb.child.once('exit', resolve)));
  const stderr = await readFile(stderrPath, 'utf8');
  console.log(`stderr: ${stderr.split('\n').length} lines; most repeated:`);
  for (const row of repeatedLines(stderr)) console.log(row);
  console.log(`kept: ${dir}`);
}

await main();
