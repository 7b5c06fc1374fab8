import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as V2Client, StreamableHTTPClientTransport as V2StreamableHTTPClientTransport, type CallToolResult as V2CallToolResult } from '@modelcontextprotocol/client';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { isAlive } from '../../src/shared/process-tree.js';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import { runWorkbench, startHttpWorkbench, type HttpSession, type HttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureEvents, fixtureServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';
import { logLines } from '../helpers/log-lines.js';

const TOKEN = `test-token-${randomBytes(16).toString('hex')}`;
const auth = { Authorization: `Bearer ${TOKEN}` };
const config = { toolboxes: { fx: { description: 'The fault-mode fixture', mcpServers: { f: fixtureServer() } } } };

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
});
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Rejection status of an SDK client connect (StreamableHTTPError carries the HTTP status). */
async function connectStatus(wb: HttpWorkbench, headers: Record<string, string>): Promise<number | undefined> {
  try {
    const session = await wb.connect(headers);
    await session.close();
    return 200;
  } catch (error) {
    assert.ok(error instanceof StreamableHTTPError, `expected an HTTP error, got ${String(error)}`);
    return error.code;
  }
}

/**
 * One raw HTTP request with node:http (so the Host header and streamed bodies are under the test's control).
 * Resolves as soon as the response has arrived, even if the server stops reading the body early.
 */
function rawRequest(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders; body?: string | Buffer; chunks?: Buffer[] },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers }, (res) => {
      answered = true;
      let body = '';
      const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (options.chunks) {
      const write = (i: number): void => {
        if (i >= options.chunks!.length) return void req.end();
        if (req.destroyed) return;
        req.write(options.chunks![i], () => write(i + 1));
      };
      write(0);
    } else {
      req.end(options.body);
    }
  });
}

async function health(wb: HttpWorkbench): Promise<{ status: string; version: string; sessions: number }> {
  const res = await fetch(`${wb.origin}/healthz`);
  assert.equal(res.status, 200);
  return (await res.json()) as { status: string; version: string; sessions: number };
}

async function callTool(session: HttpSession, name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void): Promise<CallToolResult> {
  return (await session.client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : undefined)) as CallToolResult;
}

function assertOwnProgress(progress: Progress[], total: number, who: string): void {
  assert.ok(progress.length > 0, `${who} got progress`);
  for (const p of progress) assert.equal(p.total, total, `${who} saw only its own progress: ${JSON.stringify(progress)}`);
  const steps = progress.map((p) => p.progress);
  assert.deepEqual(steps, [...new Set(steps)].sort((x, y) => x - y), `${who}: each step once, in order`);
  assert.ok(steps.every((step) => step >= 1 && step <= total));
}

describe('serve --http (Streamable HTTP on /mcp)', () => {
  let wb: HttpWorkbench;

  before(async () => {
    wb = await startHttpWorkbench(config, ['--http', '127.0.0.1:0', '--token', TOKEN, '--allow-origin', 'https://allowed.example']);
  });
  after(async () => {
    await wb?.stop();
  });

  it('prints the actual URL, binds to loopback and writes nothing to stdout', () => {
    assert.match(wb.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.notEqual(new URL(wb.url).port, '0');
    assert.equal(wb.stdout(), '');
    assert.ok(!wb.stderr().includes(TOKEN), 'the token is never logged');
  });

  it('refuses requests without a token or with a wrong one (401), before anything is spawned', async () => {
    const raw = await rawRequest(wb.url, { headers: MCP_HEADERS, body: INITIALIZE });
    assert.equal(raw.status, 401);
    assert.match(String(raw.headers['www-authenticate']), /^Bearer /);

    assert.equal(await connectStatus(wb, {}), 401);
    assert.equal(await connectStatus(wb, { Authorization: 'Bearer wrong' }), 401);
    assert.equal(await connectStatus(wb, { Authorization: `Bearer ${TOKEN.slice(0, -1)}x` }), 401, 'same length, one character off');
    assert.equal(await connectStatus(wb, { Authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` }), 401);
    const get = await rawRequest(wb.url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': 'guess' } });
    assert.equal(get.status, 401, 'GET and session guesses are checked too');
    const del = await rawRequest(wb.url, { method: 'DELETE', headers: { 'mcp-session-id': 'guess' } });
    assert.equal(del.status, 401);

    assert.deepEqual(await wb.descendants(), [], 'no downstream process was started');
    assert.equal((await health(wb)).sessions, 0, 'no session was created');
  });

  it('refuses foreign origins and foreign Host headers (403); --allow-origin and localhost origins are admitted', async () => {
    assert.equal(await connectStatus(wb, { ...auth, Origin: 'https://evil.example' }), 403);
    const nullOrigin = await rawRequest(wb.url, { headers: { ...MCP_HEADERS, ...auth, origin: 'null' }, body: INITIALIZE });
    assert.equal(nullOrigin.status, 403);
    const rebound = await rawRequest(wb.url, { headers: { ...MCP_HEADERS, ...auth, host: `evil.example:${new URL(wb.url).port}` }, body: INITIALIZE });
    assert.equal(rebound.status, 403, 'a DNS-rebound name in Host is refused');
    assert.equal((await health(wb)).sessions, 0);

    assert.equal(await connectStatus(wb, { ...auth, Origin: 'https://allowed.example' }), 200);
    assert.equal(await connectStatus(wb, { ...auth, Origin: 'http://localhost:5173' }), 200);
    assert.equal(await connectStatus(wb, { ...auth, Origin: 'http://127.0.0.1:8080' }), 200);
    const preflight = await rawRequest(wb.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://allowed.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://allowed.example');
    assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/);
    assert.deepEqual(await wb.descendants(), []);
  });

  it('answers 413 to an oversized body, declared or streamed, and keeps serving', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024, 'x');
    const declared = await rawRequest(wb.url, { headers: { ...MCP_HEADERS, ...auth, 'content-length': String(big.length) }, body: big });
    assert.equal(declared.status, 413);
    const chunks = Array.from({ length: 80 }, () => Buffer.alloc(64 * 1024, 'y'));
    const streamed = await rawRequest(wb.url, { headers: { ...MCP_HEADERS, ...auth, 'transfer-encoding': 'chunked' }, chunks });
    assert.equal(streamed.status, 413);
    assert.equal((await health(wb)).sessions, 0);
    assert.equal(await connectStatus(wb, auth), 200, 'the server still works');
  });

  it('serves /healthz without auth (status, version, session count only) and 404 elsewhere', async () => {
    const body = await health(wb);
    assert.deepEqual(Object.keys(body).sort(), ['sessions', 'status', 'version']);
    assert.equal(body.status, 'ok');
    assert.match(body.version, /^\d+\.\d+\.\d+/);
    for (const path of ['/', '/mcp/extra', '/other']) {
      const res = await fetch(`${wb.origin}${path}`, { headers: auth });
      assert.equal(res.status, 404, path);
    }
    const unknownSession = await rawRequest(wb.url, { headers: { ...MCP_HEADERS, ...auth, 'mcp-session-id': 'no-such-session' }, body: INITIALIZE });
    assert.equal(unknownSession.status, 404, 'an unknown session is 404 so clients re-initialize');
  });

  it('keeps idle connections open for a minute, so a busy client does not reuse a socket closed under it', async () => {
    const res = await rawRequest(`${wb.origin}/healthz`, { method: 'GET', headers: { connection: 'keep-alive' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['keep-alive'], 'timeout=65');
  });

  it('runs a full open_toolbox / use_tool round trip, and DELETE ends the session', async () => {
    const session = await wb.connect(auth);
    try {
      const { tools } = await session.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['open_toolbox', 'use_tool']);
      assert.match(session.client.getInstructions() ?? '', /- fx \(1 server\): The fault-mode fixture/);
      const opened = await callTool(session, 'open_toolbox', { toolbox_name: 'fx' });
      assert.notEqual(opened.isError, true, textOf(opened));
      const catalog = opened.structuredContent as OpenToolboxResult;
      assert.deepEqual(catalog.servers_connected, ['f']);
      assert.ok(catalog.tools.some((t) => t.name === 'fx__f__echo'));
      const echo = await callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'over http' } });
      assert.equal(textOf(echo), 'over http');
      const sum = await callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__add', arguments: { a: 2, b: 3 } });
      assert.deepEqual(sum.structuredContent, { sum: 5 });
      assert.equal((await health(wb)).sessions >= 1, true);
    } finally {
      const before = (await health(wb)).sessions;
      await session.close();
      assert.equal((await health(wb)).sessions, before - 1, 'DELETE closed the session');
    }
  });

  it('keeps concurrent sessions apart (results and progress), each with its own downstream process', async () => {
    const [a, b] = await Promise.all([wb.connect(auth), wb.connect(auth)]);
    try {
      await Promise.all([a, b].map((s) => callTool(s, 'open_toolbox', { toolbox_name: 'fx' })));
      const progressA: Progress[] = [];
      const progressB: Progress[] = [];
      const slowA = callTool(a, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__slow', arguments: { ms: 600, steps: 3 } }, (p) => progressA.push(p));
      const slowB = callTool(b, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__slow', arguments: { ms: 1000, steps: 5 } }, (p) => progressB.push(p));
      const echoes = Array.from({ length: 20 }, (_, i) => {
        const [session, who] = i % 2 ? [a, 'a'] : [b, 'b'];
        return callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: `${who}-${i}` } }).then((r) => ({ who, i, r }));
      });
      for (const { who, i, r } of await Promise.all(echoes)) assert.equal(textOf(r), `${who}-${i}`);
      assert.equal(textOf(await slowA), 'done after 3 steps');
      assert.equal(textOf(await slowB), 'done after 5 steps');
      // Each session sees only its own call's progress (totals 3 vs 5), in order. Not every step is required: the
      // SDK drops a progress notification that arrives in one read with its response, which a loaded machine can cause.
      assertOwnProgress(progressA, 3, 'a');
      assertOwnProgress(progressB, 5, 'b');

      const pidA = (await callTool(a, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__pid' })).structuredContent?.pid;
      const pidB = (await callTool(b, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__pid' })).structuredContent?.pid;
      assert.equal(typeof pidA, 'number');
      assert.notEqual(pidA, pidB, 'each session has its own downstream process');
      assert.deepEqual((await wb.descendants()).sort(), [pidA, pidB].sort());
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    assert.ok(await waitFor(async () => (await wb.descendants()).length === 0, 10_000), 'closing the sessions ends their downstream processes');
  });

  it('delivers a downstream log message only to the session whose call caused it', async () => {
    const [a, b] = await Promise.all([wb.connect(auth), wb.connect(auth)]);
    const seen: Record<'a' | 'b', string[]> = { a: [], b: [] };
    for (const [session, who] of [[a, 'a'], [b, 'b']] as const) {
      session.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen[who].push(JSON.stringify(n.params.data)));
    }
    try {
      for (let i = 0; i < 6; i++) {
        const [session, who] = i % 2 ? [a, 'a'] : [b, 'b'];
        await callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__log', arguments: { message: `log-from-${who}-${i}` } });
      }
      // While a's call is in flight on the shared server, b's log line cannot be attributed with certainty: it must
      // still never reach a (it reaches b only if a's call was not in flight yet).
      const progressA: Progress[] = [];
      const slowA = callTool(a, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__slow', arguments: { ms: 800, steps: 4 } }, (p) => void progressA.push(p));
      assert.ok(await waitFor(() => progressA.length > 0, 10_000), "a's slow call is in flight (its first progress arrived)");
      await callTool(b, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__log', arguments: { message: 'overlap-from-b' } });
      await slowA;
      assert.ok(await waitFor(() => seen.a.length >= 3 && seen.b.length >= 3, 5000), `both got their logs: ${JSON.stringify(seen)}`);
      assert.ok(seen.a.every((m) => m.includes('log-from-a-')), `a saw only its own: ${seen.a.join(', ')}`);
      assert.equal(seen.b.filter((m) => m.includes('log-from-b-')).length, 3);
      // b's own server: its log line is b's even while a's call is in flight (on a's own server).
      assert.ok(await waitFor(() => seen.b.some((m) => m.includes('overlap-from-b')), 5000), `b got its overlapping log: ${seen.b.join(', ')}`);
      assert.ok(seen.b.every((m) => m.includes('-from-b')), `b saw only its own: ${seen.b.join(', ')}`);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses a non-loopback address without a token (exit 2) and bad --http values, without binding', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const cfg = join(dir, 'workbench-config.json');
      await writeFile(cfg, JSON.stringify(config));
      // 0.0.0.0 is only used to check the refusal: the process exits before it binds anything.
      const open = await runWorkbench(['serve', '--http', '0.0.0.0:0', '--config', cfg]);
      assert.equal(open.code, 2, open.stderr);
      // the message is the product: it must name the address refused and why
      assert.match(open.stderr, /refusing to serve on 0\.0\.0\.0 without a token/);
      assert.deepEqual(logLines(open.stderr).map((l) => l.level), ['error'], 'one refusal, nothing started');
      const bad = await runWorkbench(['serve', '--http', 'not-a-port', '--config', cfg]);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /--http expects \[host:\]port/);
      const badOrigin = await runWorkbench(['serve', '--http', '127.0.0.1:0', '--allow-origin', 'not an origin', '--config', cfg]);
      assert.equal(badOrigin.code, 2, badOrigin.stderr);
    } finally {
      await cleanup();
    }
  });
});

/**
 * A GET event stream held open by the test, as a client that vanished would leave it: resolves once the response
 * head arrived; `ended` resolves when the workbench ends the stream.
 */
function openEventStream(url: string, headers: OutgoingHttpHeaders): Promise<{ status: number; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const ended = new Promise<void>((done) => {
        res.once('end', done);
        res.once('close', done);
        res.once('error', () => done());
      });
      res.resume();
      resolve({ status: res.statusCode ?? 0, ended });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The JSON-RPC messages in a raw response body (JSON, or the `data:` lines of an event stream). */
function messagesIn(body: string): { id?: unknown; result?: { structuredContent?: Record<string, unknown> } }[] {
  const trimmed = body.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return [JSON.parse(trimmed)].flat();
  return body
    .split('\n')
    .filter((line) => line.startsWith('data:') && line.slice(5).trim() !== '')
    .map((line) => JSON.parse(line.slice(5)));
}

/** A session made over raw HTTP (no SDK client that could clean up after itself): its id and a request sender. */
async function rawSession(wb: HttpWorkbench): Promise<{ id: string; post: (message: object) => Promise<{ status: number; body: string }> }> {
  const init = await rawRequest(wb.url, { headers: MCP_HEADERS, body: INITIALIZE });
  assert.equal(init.status, 200, init.body);
  const id = String(init.headers['mcp-session-id']);
  const post = (message: object) => rawRequest(wb.url, { headers: { ...MCP_HEADERS, 'mcp-session-id': id }, body: JSON.stringify(message) });
  assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  return { id, post };
}

describe('serve --http without a token, with a session cap of 1 and idle expiry', () => {
  let wb: HttpWorkbench;

  before(async () => {
    // Each session's end is a debug line (README "Command line", Logs).
    wb = await startHttpWorkbench(config, ['--http', '0', '--max-sessions', '1', '--session-idle-timeout', '2'], { WORKBENCH_LOG_FORMAT: 'json', WORKBENCH_LOG_LEVEL: 'debug' });
  });
  after(async () => {
    await wb?.stop();
  });

  /** Waits until no session is open and no downstream process is left (whatever was open before expires). */
  async function allExpired(): Promise<boolean> {
    return waitFor(async () => (await health(wb)).sessions === 0 && (await wb.descendants()).length === 0, 20_000);
  }

  it('allows unauthenticated use on loopback, with a warning', async () => {
    assert.match(wb.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/, 'a bare port binds to 127.0.0.1');
    const warning = logLines(wb.stderr()).find((l) => l.fields.event === 'no_token');
    assert.deepEqual({ level: warning?.level, host: warning?.fields.host }, { level: 'warn', host: '127.0.0.1' }, wb.stderr());
    const session = await wb.connect();
    const echo = await callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'no token' } });
    assert.equal(textOf(echo), 'no token');
    await session.close();
  });

  it('closes a session abandoned with its GET stream open: stream ended, server stopped, id answers 404, slot free', async () => {
    assert.ok(await allExpired());
    const abandoned = await rawSession(wb);
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: 'fx__f__pid' } } };
    const answered = await abandoned.post(call);
    const pid = messagesIn(answered.body).find((m) => m.id === 2)?.result?.structuredContent?.pid;
    assert.equal(typeof pid, 'number', answered.body);
    const stream = await openEventStream(wb.url, { 'mcp-session-id': abandoned.id });
    assert.equal(stream.status, 200);
    assert.equal(await connectStatus(wb, {}), 503, 'the cap (1) is reached while the session lives');

    // The client is gone without DELETE, its GET stream still open: only the idle expiry can free what it held.
    assert.ok(await waitFor(async () => (await health(wb)).sessions === 0, 20_000), 'the idle session expired');
    await stream.ended;
    assert.ok(await waitFor(() => !isAlive(pid as number), 10_000), "the session's downstream process was stopped");
    const stale = await rawRequest(wb.url, { headers: { ...MCP_HEADERS, 'mcp-session-id': abandoned.id }, body: JSON.stringify(call) });
    assert.equal(stale.status, 404, 'an expired id answers 404, so the client starts a new session');
    const closed = logLines(wb.stderr()).find((l) => l.fields.event === 'client_closed' && l.fields.session === abandoned.id.slice(0, 8));
    assert.equal(closed?.fields.reason, 'idle', wb.stderr());
    assert.equal(await connectStatus(wb, {}), 200, 'a new client gets in under the cap of 1');
  });

  it('frees the slot of an SDK v2 client that closed without DELETE', async () => {
    assert.ok(await allExpired());
    const client = new V2Client({ name: 'leaves-without-delete', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(new V2StreamableHTTPClientTransport(new URL(wb.url)));
    const result = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: 'fx__f__pid' } })) as V2CallToolResult;
    const pid = (result.structuredContent as { pid?: unknown } | undefined)?.pid;
    assert.equal(typeof pid, 'number');
    const idleClosings = (): number => logLines(wb.stderr()).filter((l) => l.fields.event === 'client_closed' && l.fields.reason === 'idle').length;
    const expiredBefore = idleClosings();
    await client.close();
    assert.ok(await waitFor(() => !isAlive(pid as number), 20_000), 'its downstream process was stopped');
    assert.equal(idleClosings(), expiredBefore + 1, 'by the idle expiry (the client sent no DELETE)');
    const next = await wb.connect();
    try {
      const echo = await callTool(next, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'after' } });
      assert.equal(textOf(echo), 'after', 'the next client is served');
    } finally {
      await next.close();
    }
  });

  it('does not close a session while one of its calls runs longer than the idle timeout', async () => {
    assert.ok(await allExpired());
    const session = await wb.connect();
    try {
      const slow = await callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__slow', arguments: { ms: 5000, steps: 5 } });
      assert.notEqual(slow.isError, true, textOf(slow));
      assert.equal(textOf(slow), 'done after 5 steps');
      // The session outlived the call: still open, and it answers (an expired session's id would answer 404).
      assert.equal((await health(wb)).sessions, 1, 'no session expired during the call');
      const again = await callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'same session' } });
      assert.equal(textOf(again), 'same session');
    } finally {
      await session.close();
    }
  });
});

describe('serve --http: SIGTERM', () => {
  it('exits 0 with every downstream process gone, and logs no failure for a server still in its handshake', async () => {
    const withHung = { toolboxes: { ...config.toolboxes, hung: { mcpServers: { h: fixtureServer('--never-initialize') } } } };
    const wb = await startHttpWorkbench(withHung, ['--http', '0', '--token', TOKEN]);
    const session = await wb.connect(auth);
    // A call needs the live server (open_toolbox alone may answer from the catalog cache while it starts).
    await callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'echo', arguments: { text: 'up' } });
    const opening = callTool(session, 'open_toolbox', { toolbox_name: 'hung' }).catch(() => undefined);
    assert.ok(await waitFor(async () => (await wb.descendants()).length === 2, 10_000), 'both servers run, one of them in its handshake');
    const children = await wb.descendants();
    const code = await wb.stop();
    assert.equal(code, 0, wb.stderr());
    assert.ok(await waitFor(() => children.every((pid) => !isAlive(pid)), 5_000), 'no leftover children');
    const logged = logLines(wb.stderr());
    assert.ok(logged.some((l) => l.level === 'info'), 'the log was read');
    assert.deepEqual(logged.filter((l) => l.level === 'warn' || l.level === 'error'), [], 'a clean shutdown logs nothing that reads like a failure');
    assert.doesNotMatch(wb.stderr(), /failed/);
    await session.client.close();
    await opening;
  });

  it('shuts down on SIGHUP (its terminal closed) as on SIGTERM: the call in flight answered, exit 0, no child left', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const log = join(dir, 'server.log');
    const wb = await startHttpWorkbench({ toolboxes: { fx: { mcpServers: { f: fixtureServer('--log', log) } } } }, ['--http', '0', '--token', TOKEN]);
    const session = await wb.connect(auth);
    const hanging = callTool(session, 'use_tool', { toolbox_name: 'fx', tool_name: 'hang', arguments: {} }).then((r) => r, (error: unknown) => error);
    assert.ok(await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'call' && e.tool === 'hang'), 15_000), 'the call reached the server');
    const children = await wb.descendants();
    const exited = once(wb.process, 'exit');
    wb.process.kill('SIGHUP');
    assert.deepEqual(await exited, [0, null], wb.stderr());
    assert.match(wb.stderr(), /shutting down \(SIGHUP\)/);
    const answer = await hanging;
    assert.equal(workbenchErrorCode(answer as CallToolResult), 'SHUTTING_DOWN', JSON.stringify(answer));
    assert.ok(await waitFor(() => children.every((pid) => !isAlive(pid)), 5_000), 'no leftover children');
    await session.client.close();
    await wb.stop();
  });
});
