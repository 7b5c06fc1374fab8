import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crossSpawn from 'cross-spawn';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { LineWriter } from '../shared/line-writer.js';
import { LineSplitter, type OversizedLine } from '../shared/line-splitter.js';
import { createRepeatWindow, type HeldBack, type RepeatWindow } from '../shared/repeat-window.js';
import { droppedResponse } from './dropped-message.js';
import type { GroupTracker } from './orphan-reaper.js';
import { isAlive, listDescendants, signal, terminateAll, waitForExit } from '../shared/process-tree.js';
import type { Logger } from '../log.js';

/**
 * An MCP client transport over a child process's stdio, written for a proxy that runs all day:
 * - the child leads its own process group, so closing ends the whole tree it started (npx → sh → node), not just
 *   the direct child as the SDK's transport does;
 * - exit code, signal and the tail of stderr are kept so a crash can be explained to the user;
 * - lines on stdout that are not JSON-RPC are skipped and logged (truncated, rate-limited) instead of killing the link;
 * - a single message larger than `maxMessageBytes` is dropped without being buffered whole, and the request it
 *   answered is failed with a clear error instead of exhausting memory;
 * - a child that exits while a descendant still holds its stdout open is still noticed at once.
 */
export interface ChildProcessTransportOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Upper bound for one JSON-RPC message from the child. */
  maxMessageBytes: number;
  /** How many bytes of the child's stderr to keep for error reports. */
  stderrTailBytes?: number;
  log: Logger;
  /** Told of the child's process group while it lives, to end it if the workbench dies without closing it. */
  groups?: GroupTracker;
  /** Gets every stdout line that is not JSON-RPC (shortened) instead of the rate-limited warnings in the log. */
  onNoise?: (line: string) => void;
  /** The window of those warnings (default NOISE_WINDOW_MS, a minute): 10 lines of their own, the rest counted. */
  noiseWindowMs?: number;
}

/**
 * The PATH a child with environment `env` looks its command up on: `PATH` (on Windows, where names of variables are
 * not case-sensitive, `Path` and any other spelling too); undefined when it has none.
 */
export function searchPathOf(env: Record<string, string | undefined>): string | undefined {
  if (process.platform !== 'win32') return env.PATH;
  const key = Object.keys(env).find((name) => name.toUpperCase() === 'PATH');
  return key === undefined ? undefined : env[key];
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const NOISE_LOGS_PER_WINDOW = 10;
const NOISE_WINDOW_MS = 60_000;

export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly options: ChildProcessTransportOptions;
  private readonly lines: LineSplitter;
  private stderrTail = '';
  private exit: ExitInfo | undefined;
  private closed = false;
  private out: LineWriter | undefined;
  private spawnError: NodeJS.ErrnoException | undefined;
  private readonly noise: RepeatWindow<'stdout'>;

  constructor(options: ChildProcessTransportOptions) {
    this.options = options;
    // A server that prints a burst (a banner) and then goes quiet has its count said when the window ends, not
    // hours later when the connection closes.
    this.noise = createRepeatWindow<'stdout'>({
      windowMs: options.noiseWindowMs ?? NOISE_WINDOW_MS,
      linesPerKey: NOISE_LOGS_PER_WINDOW,
      maxKeys: 1,
      onEnded: (held) => this.noiseHeldBack(held),
    });
    this.lines = new LineSplitter(options.maxMessageBytes, { line: (line) => this.onLine(line), oversized: (line) => this.onOversized(line) });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** An error about starting the command that came after the process was spawned (cross-spawn's ENOENT on Windows). */
  get startError(): NodeJS.ErrnoException | undefined {
    return this.spawnError;
  }

  /** The PATH the command was looked up on (the child's environment's; undefined: it has none). */
  get searchPath(): string | undefined {
    return searchPathOf(this.options.env);
  }

  /** How the child ended, once it has. */
  get exitInfo(): ExitInfo | undefined {
    return this.exit;
  }

  /** The last lines the child wrote to stderr (bounded). */
  get stderr(): string {
    return this.stderrTail;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ChildProcessTransport already started');
    return new Promise((resolve, reject) => {
      const { command, args, env, cwd } = this.options;
      // On Windows, `npx`, `uvx` and other commands are .cmd shims that spawn() cannot start without a shell, and
      // arguments need cmd.exe escaping: cross-spawn (the SDK's own stdio transport uses it) does both.
      const start = process.platform === 'win32' ? crossSpawn : spawn;
      const child = start(command, args, {
        env,
        cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        // Own process group: signals to -pid reach every descendant that did not move itself elsewhere, and a
        // Ctrl+C in the terminal reaches the workbench only, which then shuts children down in order.
        detached: process.platform !== 'win32',
        windowsHide: true,
      });
      this.child = child;
      this.out = new LineWriter(child.stdin!);
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        if (process.platform !== 'win32' && child.pid !== undefined) this.options.groups?.track(child.pid);
        resolve();
      });
      child.once('error', (error) => {
        if (!spawned) return reject(error);
        // cross-spawn on Windows reports a command that cmd.exe could not find this way, after 'spawn'.
        this.spawnError ??= error;
        this.onerror?.(error);
      });
      child.stdout!.on('data', (chunk: Buffer) => this.lines.push(chunk));
      child.stderr!.on('data', (chunk: Buffer) => this.onStderr(chunk));
      child.stdin!.on('error', (error) => {
        // EPIPE after the child died is expected; the exit handler reports the real cause.
        if ((error as NodeJS.ErrnoException).code !== 'EPIPE') this.onerror?.(error);
      });
      child.once('exit', (code, sig) => {
        this.exit = { code, signal: sig };
        // stdout may still hold the child's last messages; give them a moment, but do not wait for descendants
        // that inherited the pipe and keep it open.
        setTimeout(() => this.finish(), 50).unref();
      });
      child.once('close', () => this.finish());
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    try {
      this.write(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.out!.ready();
  }

  /** `send` without the promise (the call channel's hot path); throws when the server process is gone. */
  write(message: JSONRPCMessage): void {
    if (!this.out || this.closed || this.exit) throw new Error('Not connected: the server process has exited');
    this.out.write(message);
  }

  /**
   * Ends the child and everything it started: close stdin and wait (well-behaved servers exit), then SIGTERM the
   * process group and known descendants, then SIGKILL what is left. Resolves when all are gone or after ~3 s.
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) {
      this.finish();
      return;
    }
    const pid = child.pid;
    // Snapshot descendants first: once the child exits they are re-parented and can no longer be found from it.
    const descendants = await listDescendants(pid).catch(() => [] as number[]);
    try {
      // A message queued this tick (say, a cancellation) goes out before the end.
      this.out?.flush();
      child.stdin?.end();
    } catch {
      // Already closed.
    }
    if (!this.exit) await waitForExit([pid], 1000);
    if (process.platform === 'win32') {
      // No process groups or POSIX signals: taskkill ends the tree (the .cmd shim and the server under it).
      if (isAlive(pid)) await new Promise((resolve) => execFile('taskkill', ['/pid', String(pid), '/T', '/F'], { windowsHide: true }, resolve));
      this.finish();
      return;
    }
    const groupSignal = (sig: NodeJS.Signals): boolean => signal(-pid, sig) || signal(pid, sig);
    // The group may outlive its leader (helpers started by the server), so signal it even if the child exited.
    if (groupSignal('SIGTERM')) {
      const deadline = Date.now() + 1500;
      while (Date.now() < deadline && (signal(-pid, 0) || signal(pid, 0))) await new Promise((r) => setTimeout(r, 50));
      groupSignal('SIGKILL');
    }
    // Descendants that left the group (setsid, detached helpers).
    await terminateAll(descendants, 500);
    this.options.groups?.untrack(pid);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    // Noise held back in the current window is said now, and its timer stopped.
    this.noiseHeldBack(this.noise.drain());
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.onclose?.();
  }

  private onStderr(chunk: Buffer): void {
    const limit = this.options.stderrTailBytes ?? 8192;
    this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-limit);
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) this.options.log.debug(`stderr: ${line}`);
  }

  /**
   * One line from the server: a JSON-RPC message, noise some servers print on stdout, or noise with a message after
   * it — a progress display redraws its line with "\r" and never ends it, so the next message shares its line.
   */
  private onLine(line: Buffer): void {
    if (line.length === 0) return;
    const whole = parseMessage(line, 0);
    if (whole) {
      this.onmessage?.(whole);
      return;
    }
    const after = messageAfterNoise(line);
    this.noiseOnStdout(after ? line.subarray(0, after.start) : line);
    if (after) this.onmessage?.(after.message);
  }

  /** Turns a dropped oversized response into a JSON-RPC error for its request, so the caller is not left waiting. */
  private onOversized({ bytes, id }: OversizedLine): void {
    const limit = this.options.maxMessageBytes;
    this.options.log.warn(`dropped a ${bytes}-byte message from the server: larger than the ${limit}-byte limit`);
    if (id === undefined) return;
    this.onmessage?.(droppedResponse(id, { reason: 'too-large', limitBytes: limit, bytes }));
  }

  private noiseOnStdout(line: Buffer): void {
    if (this.options.onNoise) {
      const shown = line.toString('utf8', 0, Math.min(line.length, 200)).replace(/[\x00-\x1f\x7f]/g, ' ');
      this.options.onNoise(`${shown}${line.length > 200 ? '…' : ''}`);
      return;
    }
    const { line: logged, ended } = this.noise.admit('stdout');
    this.noiseHeldBack(ended);
    if (!logged) return;
    const text = line.toString('utf8', 0, Math.min(line.length, 200)).replace(/[\x00-\x1f\x7f]/g, ' ');
    this.options.log.warn(
      `ignored a line on stdout that is not JSON-RPC (servers must log to stderr): ${JSON.stringify(text)}${line.length > 200 ? '…' : ''}`,
      { event: 'stdout_noise', line_bytes: line.length },
    );
  }

  private noiseHeldBack(held: HeldBack<'stdout'> | undefined): void {
    if (held === undefined) return;
    this.options.log.warn(`${held.total} more non-JSON-RPC lines on stdout were ignored`, { event: 'stdout_noise', suppressed: held.total });
  }
}

/** How many "{" of a line that is not one message are tried as the start of a message after noise. */
const NOISE_PREFIX_TRIES = 4;

/** The JSON-RPC message in `line` from byte `start` to its end, if that is one. */
function parseMessage(line: Buffer, start: number): JSONRPCMessage | undefined {
  let message: unknown;
  try {
    message = JSON.parse(line.toString('utf8', start));
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') return undefined;
  return message as JSONRPCMessage;
}

/** A message that ends the line after some noise, and where it starts; bounded to a few tries per line. */
function messageAfterNoise(line: Buffer): { start: number; message: JSONRPCMessage } | undefined {
  let start = 0;
  for (let tries = 0; tries < NOISE_PREFIX_TRIES; tries++) {
    start = line.indexOf(0x7b, start + 1);
    if (start === -1) return undefined;
    const message = parseMessage(line, start);
    if (message) return { start, message };
  }
  return undefined;
}
