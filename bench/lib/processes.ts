import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { isOrphanWatchdog } from '../../src/clients/orphan-reaper.js';
import { isAlive, listDescendants, signal } from '../../src/shared/process-tree.js';
import { node, paths } from '../../test/helpers/workbench-process.js';

/** A stdio server entry as it appears in a workbench config. */
export interface ServerEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** One MCP process the bench started and connected an SDK client to. */
export interface Running {
  label: string;
  client: Client;
  pid: number;
  /** Tail of the process's stderr, for error messages. */
  stderr(): string;
  /** Closes the client, waits for the process (and, for a workbench, its children) to be gone; idempotent. */
  close(): Promise<void>;
}

const STDERR_TAIL = 4000;
const running = new Set<Running>();

/** How many started processes are still open (should be 0 between phases). */
export function openCount(): number {
  return running.size;
}

/** Closes everything still open; used at the end of each phase and of the run, whatever happened. */
export async function closeAll(): Promise<void> {
  await Promise.allSettled([...running].map((r) => r.close()));
}

async function connect(label: string, transport: StdioClientTransport, onClose: () => Promise<void>, connectTimeoutMs?: number): Promise<Running> {
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  const client = new Client({ name: 'mcp-workbench-bench', version: '1.0.0' }, { capabilities: {} });
  let closing: Promise<void> | undefined;
  const handle: Running = {
    label,
    client,
    pid: 0,
    stderr: () => stderr,
    close: () => {
      closing ??= (async () => {
        try {
          await onClose();
        } finally {
          running.delete(handle);
        }
      })();
      return closing;
    },
  };
  try {
    await client.connect(transport, connectTimeoutMs === undefined ? undefined : { timeout: connectTimeoutMs });
  } catch (error) {
    await transport.close().catch(() => {});
    const pid = transport.pid;
    if (pid) await reap([pid]);
    throw new Error(`${label}: could not connect: ${error instanceof Error ? error.message : String(error)}\n${stderr.trim()}`);
  }
  handle.pid = transport.pid!;
  running.add(handle);
  return handle;
}

/** Waits up to `ms` for each pid to be gone; SIGKILLs the ones (that we started) still there. */
async function reap(pids: readonly number[], ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    alive = alive.filter(isAlive);
  }
  for (const pid of alive) signal(pid, 'SIGKILL');
}

function baseEnv(extra: Record<string, string> | undefined, home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? home, ...extra };
}

/**
 * A server started directly with the SDK's own stdio client transport: the baseline a workbench is compared to.
 * `connectTimeoutMs`: how long the handshake may take (the SDK's 60 s default otherwise; a process under valgrind on a
 * loaded machine can take longer to start).
 */
export async function startDirect(label: string, entry: ServerEntry, connectTimeoutMs?: number): Promise<Running> {
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    env: baseEnv(entry.env, tmpdir()),
    stderr: 'pipe',
  });
  const handle = await connect(label, transport, async () => {
    const pid = transport.pid;
    await handle.client.close().catch(() => {});
    if (pid) await reap([pid]);
  }, connectTimeoutMs);
  return handle;
}

export interface WorkbenchHandle extends Running {
  /** Pids of the workbench's descendants (the downstream servers it started). */
  descendants(): Promise<number[]>;
}

export interface WorkbenchStart {
  /** Options for the workbench's node (e.g. --cpu-prof) placed before the script. */
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** Another build's `dist/cli/main.js` (to compare two builds in one run); default this repo's. */
  cli?: string;
}

/**
 * Starts the built workbench (`dist/cli/main.js serve --config <tmp>`) with `config` and connects an SDK client. Closing
 * ends stdin (the workbench then shuts its children down and exits 0, which is also when --cpu-prof writes its
 * profile), waits for it, and SIGKILLs anything of its tree that is left after 10 s.
 */
export async function startWorkbench(label: string, config: unknown, options: WorkbenchStart = {}): Promise<WorkbenchHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'wb-bench-'));
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
  const transport = new StdioClientTransport({
    command: node,
    args: [...(options.nodeArgs ?? []), options.cli ?? paths.cli, 'serve', '--config', configPath],
    // A fresh catalog cache per workbench unless the phase shares one: every open is cold unless it says otherwise. The
    // tool-state file (and the approved tool definitions beside it) are the workbench's own too, never the user's.
    env: baseEnv({ MCP_WORKBENCH_CACHE_DIR: join(dir, 'catalog-cache'), WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'), ...options.env }, dir),
    stderr: 'pipe',
    cwd: dir,
  });
  let known: number[] = [];
  let handle: WorkbenchHandle;
  try {
    const base = await connect(label, transport, async () => {
      const pid = transport.pid;
      if (pid) known = [...new Set([...known, ...(await listDescendants(pid).catch(() => []))])];
      // Ending stdin is the workbench's normal shutdown path. The SDK transport would SIGTERM after 2 s, which
      // would lose a --cpu-prof profile, so we close stdin ourselves and wait longer before escalating.
      await handle.client.close().catch(() => {});
      if (pid) await reap([pid], 10_000);
      await reap(known, 2000);
      await rm(dir, { recursive: true, force: true });
    });
    handle = Object.assign(base, {
      descendants: async () => {
        const list = await listDescendants(base.pid).catch(() => [] as number[]);
        known = [...new Set([...known, ...list])];
        return list.filter((pid) => !isOrphanWatchdog(pid));
      },
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return handle;
}

/** Resident set size of a process in bytes (Linux /proc/<pid>/status VmRSS); NaN elsewhere. */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

let clockTicks: number | undefined;

/** User + system CPU time of a process in ms (Linux /proc/<pid>/stat); NaN elsewhere. */
export function cpuMs(pid: number): number {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    clockTicks = 100;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state(3) ppid(4) … utime(14) stime(15), i.e. indexes 11 and 12 here.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

/** The minimal proxies the bench measures beside the workbench (see the file's header). */
export const NULL_PROXY = fileURLToPath(new URL('./null-proxy.mjs', import.meta.url));

/** Server entries for the benchmarks (absolute paths, no npx, so start-up is the server's own). */
export const servers = {
  everything: (): ServerEntry => ({ command: node, args: [paths.everything, 'stdio'] }),
  memory: (file: string): ServerEntry => ({ command: node, args: [paths.memory], env: { MEMORY_FILE_PATH: file } }),
  filesystem: (root: string): ServerEntry => ({ command: node, args: [paths.filesystem, root] }),
  fixture: (...flags: string[]): ServerEntry => ({ command: node, args: [paths.fixture, ...flags] }),
};
