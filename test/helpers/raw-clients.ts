import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { node, paths, tempDir } from './workbench-process.js';

/**
 * JSON-RPC over the wire without an SDK client in between, so tests see exactly the bytes the workbench sends: one
 * message is written as given (even if it is not JSON), and the lines or SSE events that come back are kept as text.
 */
export interface RawWire {
  /** Sends `body` (a string as is, anything else as JSON) and returns the messages answering it, as JSON text. */
  exchange(body: unknown, until: (messages: string[]) => boolean): Promise<string[]>;
  close(): Promise<void>;
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** `serve` on stdio as a real process, initialized. */
export async function rawStdio(config: unknown, env: Record<string, string> = {}): Promise<RawWire> {
  const wire = await spawnStdio(config, env, 'wb-raw-');
  await wire.exchange(INITIALIZE, (m) => m.length > 0);
  wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return wire;
}

/**
 * `serve` on stdio as a real process, with no handshake made: each line it writes is collected, and `exchange` sends
 * one message and waits (20 s at most) until what came back since satisfies `until`.
 */
async function spawnStdio(config: unknown, env: Record<string, string>, prefix: string): Promise<RawWire & { send(message: unknown): void }> {
  const { dir, cleanup } = await tempDir(prefix);
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify(config));
  const child: ChildProcess = spawn(node, [paths.cli, 'serve', '--config', configPath], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'), ...env },
    cwd: dir,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderr!.resume();
  const lines: string[] = [];
  let waiter: (() => void) | undefined;
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    let newline: number;
    while ((newline = partial.indexOf('\n')) >= 0) {
      lines.push(partial.slice(0, newline));
      partial = partial.slice(newline + 1);
    }
    waiter?.();
  });
  const send = (message: unknown): void => void child.stdin!.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  return {
    send,
    exchange: async (body, until) => {
      const start = lines.length;
      send(body);
      const deadline = Date.now() + 20_000;
      while (!until(lines.slice(start))) {
        if (Date.now() > deadline) throw new Error(`no answer over stdio to ${JSON.stringify(body).slice(0, 200)}; got ${lines.slice(start).join('\n')}`);
        // Woken by the next line, or after 200 ms at most.
        await new Promise<void>((resolve) => {
          waiter = resolve;
          setTimeout(resolve, 200);
        });
      }
      return lines.slice(start);
    },
    close: async () => {
      child.stdin!.end();
      await new Promise((resolve) => child.once('exit', resolve));
      await cleanup();
    },
  };
}

/** One POST per message to a running `serve --http`, in one initialized session; SSE or JSON answers as text. */
export async function rawHttp(url: string, headers: Record<string, string> = {}): Promise<RawWire & { sessionId: string; post(body: unknown, signal?: AbortSignal): Promise<{ status: number; messages: string[] }> }> {
  let sessionId = '';
  const post = async (body: unknown, signal?: AbortSignal): Promise<{ status: number; messages: string[] }> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal,
    });
    const messages = await messagesOf(response);
    sessionId ||= response.headers.get('mcp-session-id') ?? '';
    return { status: response.status, messages };
  };
  await post(INITIALIZE);
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    sessionId,
    post,
    exchange: async (body) => (await post(body)).messages,
    close: async () => {
      await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, ...headers } }).catch(() => {});
    },
  };
}

/** The per-request envelope of a client of MCP 2026-07-28 (the same for every request of one client). */
export const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
} as const;

/** `serve` on stdio as a real process, spoken to as MCP 2026-07-28: no handshake, each request carries its envelope. */
export function rawModernStdio(config: unknown, env: Record<string, string> = {}): Promise<RawWire> {
  return spawnStdio(config, env, 'wb-raw-modern-');
}

/**
 * One POST per request to a running `serve --http`, as MCP 2026-07-28 (no session); SSE or JSON answers as text. A
 * string body is sent as is (even if it is not JSON); `post` also gives the HTTP status and takes an abort signal.
 */
export function rawModernHttp(url: string): RawWire & { post(body: unknown, signal?: AbortSignal): Promise<{ status: number; messages: string[] }> } {
  const post = async (body: unknown, signal?: AbortSignal): Promise<{ status: number; messages: string[] }> => {
    const message = (typeof body === 'object' && body !== null ? body : {}) as { method?: string; params?: { name?: string } };
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        ...(message.method ? { 'mcp-method': message.method } : {}),
        ...(typeof message.params?.name === 'string' ? { 'mcp-name': message.params.name } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal,
    });
    const messages = await messagesOf(response);
    return { status: response.status, messages };
  };
  return {
    post,
    exchange: async (body) => (await post(body)).messages,
    close: async () => {},
  };
}

/** The JSON-RPC messages of an HTTP answer, as text: each `data:` of an event stream, or the JSON body. */
async function messagesOf(response: Response): Promise<string[]> {
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) return text.length > 0 ? [text] : [];
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6))
    .filter((data) => data.length > 0);
}
