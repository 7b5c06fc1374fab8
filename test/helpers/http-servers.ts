import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { isAlive } from '../../src/shared/process-tree.js';
import { node, paths, waitFor } from './workbench-process.js';

/**
 * HTTP servers for the remote-server tests, all on 127.0.0.1 only: server-everything in its Streamable HTTP or SSE
 * mode, and a recording proxy in front of either.
 */

const preload = fileURLToPath(new URL('./http-loopback-preload.mjs', import.meta.url));

export interface ChildHttpServer {
  /** http://127.0.0.1:PORT (no path). */
  origin: string;
  pid: number;
  output(): string;
  close(): Promise<void>;
}

/**
 * Starts `server-everything streamableHttp|sse` on a free loopback port (its endpoints: /mcp, or /sse + /message).
 * The preload binds it to 127.0.0.1 and reports the port it got.
 */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse', env: Record<string, string> = {}): Promise<ChildHttpServer> {
  const child = spawn(node, ['--import', preload, paths.everything, mode], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything ${mode} did not start:\n${output}`)), 20_000);
    const check = (): void => {
      const match = /HTTP_TEST_LISTENING (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stderr!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything ${mode} exited with ${code}:\n${output}`));
    });
  });
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid!, output: () => output, close: () => stopChild(child) };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  await waitFor(() => !isAlive(child.pid!), 3_000);
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export interface RecordingProxy {
  /** http://127.0.0.1:PORT (no path); paths are forwarded as they are. */
  origin: string;
  requests: RecordedRequest[];
  /**
   * From now on, answer 404 "Session not found" to every request carrying a session id seen so far (an
   * `mcp-session-id` header, or a legacy SSE message endpoint's `sessionId`), as a restarted server would.
   */
  expireSessions(): void;
  close(): Promise<void>;
}

/**
 * A pass-through HTTP proxy (bodies and event streams are piped as they come) that records each request's method,
 * path and headers, and can pretend that the server ended its Streamable HTTP sessions.
 */
export async function startRecordingProxy(target: string, options: { firstRequestDelayMs?: number } = {}): Promise<RecordingProxy> {
  const targetUrl = new URL(target);
  const requests: RecordedRequest[] = [];
  const seenSessions = new Set<string>();
  const expired = new Set<string>();
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    // A slow remote server (a cold start): its first answer takes this long.
    if (requests.length === 1 && options.firstRequestDelayMs) {
      setTimeout(() => forward(req, res), options.firstRequestDelayMs);
      return;
    }
    forward(req, res);
  });
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    // Streamable HTTP carries the session in a header; legacy SSE in the message endpoint's query (it is seen there).
    const sseSession = new URL(req.url ?? '/', 'http://proxy').searchParams.get('sessionId');
    if (sseSession) seenSessions.add(sseSession);
    const session = req.headers['mcp-session-id'] ?? sseSession;
    if (typeof session === 'string' && expired.has(session)) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return;
    }
    const upstream = httpRequest(
      { host: targetUrl.hostname, port: targetUrl.port, method: req.method, path: req.url, headers: { ...req.headers, host: targetUrl.host } },
      (upstreamRes) => {
        const id = upstreamRes.headers['mcp-session-id'];
        if (typeof id === 'string') seenSessions.add(id);
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    expireSessions: () => {
      for (const id of seenSessions) expired.add(id);
    },
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}

const MODERN_FIXTURE = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));

/** The modern-only Streamable HTTP fixture (test/fixtures/modern-server.mjs --http) on a free port, with extra flags. */
export async function startModernHttp(...flags: string[]): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, [MODERN_FIXTURE, '--http', ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the modern HTTP fixture did not start:\n${output}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /MODERN_HTTP_LISTENING (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the modern HTTP fixture exited with ${code}:\n${output}`));
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => stopChild(child) };
}
