import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { MODERN_ENVELOPE, rawHttp, rawModernHttp, rawModernStdio, rawStdio, type RawWire } from '../helpers/raw-clients.js';
import { logLines, type LogLine } from '../helpers/log-lines.js';
import { fixtureEvents, fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * The same requests over stdio and over Streamable HTTP must get the same answers, byte for byte (README "Serving
 * over HTTP"): both transports hand use_tool and open_toolbox to one pipeline, and frame only. The table runs for both
 * protocol eras — a handshake-era client (legacy) and a client of MCP 2026-07-28 (modern, each request carrying its
 * envelope) — on both transports: legacy-stdio against legacy-HTTP, modern-stdio against modern-HTTP.
 */
const LIMIT = 64 * 1024;
const env = { WORKBENCH_MAX_MESSAGE_BYTES: String(LIMIT) };

type Era = 'legacy' | 'modern';
const ERAS: readonly Era[] = ['legacy', 'modern'];

const call = (id: number | string, name: string, args: unknown, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});
const use = (id: number, tool: string, args?: Record<string, unknown>, meta?: Record<string, unknown>) =>
  call(id, 'use_tool', { toolbox_name: 'fx', tool_name: `fx__f__${tool}`, ...(args ? { arguments: args } : {}) }, meta);

/** The messages answering `id` (its response, and notifications before it), as the text that came over the wire. */
const answered = (id: unknown) => (messages: string[]) => messages.some((m) => (JSON.parse(m) as { id?: unknown }).id === id);
const idOf = (message: string): unknown => (JSON.parse(message) as { id?: unknown }).id;

interface Case {
  name: string;
  /** The request as a handshake-era client sends it (a string is sent as is). */
  body: unknown;
  id: unknown;
  /** Top-level params a client adds to the request (2026-07-28 retry and task keys). */
  params?: Record<string, unknown>;
  /** Envelope keys a modern client sends instead of the usual ones. */
  envelope?: Record<string, unknown>;
  /** The eras the case means something in (both unless said); a case for one era says why. */
  eras?: readonly Era[];
}

/** The case's request as a client of `era` sends it: a modern one puts its envelope in `_meta`, before its own keys. */
function requestOf(c: Case, era: Era): unknown {
  if (typeof c.body !== 'object' || c.body === null || !('params' in c.body)) return c.body;
  const request = c.body as { params: Record<string, unknown> & { _meta?: Record<string, unknown> } };
  if (era === 'legacy') return c.params ? { ...request, params: { ...request.params, ...c.params } } : request;
  return { ...request, params: { ...request.params, ...c.params, _meta: { ...MODERN_ENVELOPE, ...c.envelope, ...request.params._meta } } };
}

const CASES: Case[] = [
  { name: 'open_toolbox', body: call(1, 'open_toolbox', { toolbox_name: 'fx' }), id: 1 },
  { name: 'a normal result', body: use(2, 'echo', { text: 'same on both' }), id: 2 },
  { name: 'an image and a resource link', body: use(3, 'image'), id: 3 },
  { name: 'a content block of an unknown type, and an unknown field', body: use(4, 'odd_result', { kind: 'unknown-type' }), id: 4 },
  { name: 'an image whose data is not base64', body: use(5, 'odd_result', { kind: 'bad-base64' }), id: 5 },
  { name: 'a downstream isError result', body: use(6, 'fail', { message: 'nope' }), id: 6 },
  { name: 'a downstream JSON-RPC error with data', body: use(7, 'throw_jsonrpc', { code: -32050, message: 'boom', data: { why: 'x' } }), id: 7 },
  { name: 'arguments that do not match the schema', body: use(8, 'echo', { text: 3 }), id: 8 },
  { name: 'use_tool without toolbox_name', body: call(9, 'use_tool', { tool_name: 'x' }), id: 9 },
  { name: 'tools/call with arguments null', body: call(10, 'use_tool', null), id: 10 },
  { name: 'tools/call with arguments an array', body: call(11, 'open_toolbox', []), id: 11 },
  { name: 'an unknown top-level tool', body: call(12, 'no_such_tool', {}), id: 12 },
  { name: 'use_tool with an unknown parameter', body: call(13, 'use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__echo', extra: 1 }), id: 13 },
  { name: 'a line that is not JSON', body: '{"jsonrpc": "2.0", "id": 14, ', id: null },
  { name: 'JSON that is not JSON-RPC', body: { hello: 'world' }, id: null },
  { name: 'a message over the size limit (id first)', body: use(16, 'echo', { text: 'y'.repeat(LIMIT) }), id: 16 },
  {
    name: 'a message over the size limit (id last)',
    body: { jsonrpc: '2.0', method: 'tools/call', params: { name: 'use_tool', arguments: { pad: 'z'.repeat(LIMIT) } }, id: 17 },
    id: 17,
  },
  { name: 'progress, with the client _meta passed downstream', body: use(18, 'slow', { ms: 200, steps: 2 }, { progressToken: 'p-18' }), id: 18 },
  { name: 'the client _meta (trace context) reaches the downstream call', body: use(19, 'meta_echo', {}, { traceparent: '00-abc-def-01', 'x/vendor': { a: 1 } }), id: 19 },
  { name: 'progress token after other _meta keys', body: use(50, 'meta_echo', {}, { 'x/first': 1, progressToken: 'p-50' }), id: 50 },
  { name: 'a numeric progress token, with progress', body: use(51, 'slow', { ms: 100, steps: 2 }, { progressToken: 51 }), id: 51 },
  { name: 'a task-augmented call', body: use(52, 'echo', { text: 'task' }), params: { task: { ttl: 1000 } }, id: 52 },
  { name: 'a requestState that was never handed out', body: use(53, 'echo', { text: 'x' }), params: { requestState: 'forged' }, id: 53 },
  { name: 'inputResponses without a requestState', body: use(54, 'echo', { text: 'x' }), params: { inputResponses: {} }, id: 54 },
  // A handshake-era client declares its capabilities once, at initialize: it has no per-request envelope to get wrong.
  { name: 'a malformed capabilities envelope', body: use(55, 'echo', { text: 'x' }), envelope: { 'io.modelcontextprotocol/clientCapabilities': 'all' }, id: 55, eras: ['modern'] },
  { name: 'other declared capabilities', body: use(56, 'echo', { text: 'x' }), envelope: { 'io.modelcontextprotocol/clientCapabilities': { roots: {} } }, id: 56, eras: ['modern'] },
  { name: 'open_toolbox of an unknown toolbox', body: call(57, 'open_toolbox', { toolbox_name: 'nope' }), id: 57 },
];

interface Last {
  result?: { resultType?: string; _meta?: Record<string, unknown>; content?: { text?: string }[] } & Record<string, unknown>;
  error?: { code: number; message: string };
}

/** The checks of one case beyond "the same on both transports", on the stdio answer `messages` of `era`. */
function checkCase(c: Case, era: Era, messages: string[]): void {
  const last = JSON.parse(messages.at(-1)!) as Last;
  // A complete result of the modern era says so, and carries the server's identity; the rest of it is the legacy one.
  let result = last.result;
  if (era === 'modern' && result) {
    const { resultType, _meta, ...rest } = result;
    assert.equal(resultType, 'complete');
    assert.ok(_meta?.['io.modelcontextprotocol/serverInfo'], 'the server identity is stamped');
    const { 'io.modelcontextprotocol/serverInfo': _serverInfo, ...ownMeta } = _meta ?? {};
    result = Object.keys(ownMeta).length > 0 ? { ...rest, _meta: ownMeta } : rest;
  }
  if (c.name.includes('over the size limit')) assert.equal(last.error?.code, -32600);
  // Protocol faults are JSON-RPC errors; a meta-tool's malformed parameters are refusals (README "Errors").
  if (c.name.startsWith('tools/call with arguments') || c.name === 'an unknown top-level tool') assert.equal(last.error?.code, -32602);
  if (c.name === 'use_tool without toolbox_name' || c.name.startsWith('use_tool with an unknown parameter')) {
    const meta = result?._meta?.['mcp-workbench/error'] as { code?: string; retryable?: boolean; hint?: string } | undefined;
    assert.deepEqual([meta?.code, meta?.retryable], ['INVALID_PARAMETERS', false]);
    assert.match(meta?.hint ?? '', /^Expected: use_tool \{/, 'the signature is the hint');
  }
  // A handshake-era client gets a downstream result as it was, however odd; the SDK's codec of MCP 2026-07-28 checks
  // results against the spec's schema first (the same on both transports, which is what this table asks).
  if (era === 'legacy' && c.name.startsWith('a content block of an unknown type')) {
    assert.deepEqual(result, { content: [{ type: 'hologram', frames: 3 }, { type: 'text', text: 'and text' }], vendorField: { kept: true } });
  }
  if (era === 'legacy' && c.name.includes('not base64')) assert.deepEqual(result, { content: [{ type: 'image', data: 'not base64 at all!', mimeType: 'image/png' }] });
  if (c.name.startsWith('progress,') || c.name.includes('with progress')) assert.ok(messages.length > 1, 'progress came before the result');
  if (c.name.includes('_meta (trace context)')) {
    const seen = JSON.parse(result?.content?.[0]?.text ?? '{}') as Record<string, unknown>;
    assert.deepEqual({ traceparent: seen.traceparent, 'x/vendor': seen['x/vendor'] }, { traceparent: '00-abc-def-01', 'x/vendor': { a: 1 } });
    if (era === 'legacy') assert.deepEqual(Object.keys(seen), ['traceparent', 'x/vendor']);
  }
  if (c.name.includes('malformed capabilities')) {
    assert.equal(last.error?.code, -32602);
    assert.equal(last.error?.message, 'Invalid _meta envelope for protocol revision 2026-07-28: Invalid input: expected object, received string');
  }
}

/** A workbench over stdio and one over HTTP, each with the fixture writing its events to a file, spoken to as `era`. */
interface Wires {
  stdio: RawWire;
  http: RawWire & { post(body: unknown, signal?: AbortSignal): Promise<{ status: number; messages: string[] }> };
  /** The fixture's event files behind each transport. */
  events: { stdio: string; http: string };
  /** The HTTP workbench's log lines so far (JSON format). */
  httpLog(): LogLine[];
  close(): Promise<void>;
}

async function openWires(era: Era): Promise<Wires> {
  const { dir, cleanup } = await tempDir(`wb-parity-${era}-`);
  const events = { stdio: join(dir, 'stdio.log'), http: join(dir, 'http.log') };
  const config = (log: string) => ({ toolboxes: { fx: { mcpServers: { f: fixtureServer('--odd', '--log', log) } } } });
  const stdio = era === 'legacy' ? await rawStdio(config(events.stdio), env) : await rawModernStdio(config(events.stdio), env);
  const workbench: HttpWorkbench = await startHttpWorkbench(config(events.http), ['--http', '127.0.0.1:0'], { ...env, WORKBENCH_LOG_FORMAT: 'json' });
  const http = era === 'legacy' ? await rawHttp(workbench.url) : rawModernHttp(workbench.url);
  return {
    stdio,
    http,
    events,
    httpLog: () => logLines(workbench.stderr()),
    close: async () => {
      await stdio.close();
      await http.close();
      await workbench.stop();
      await cleanup();
    },
  };
}

for (const era of ERAS) {
  describe(`${era} clients: stdio and HTTP give the same answers`, () => {
    let wires: Wires;
    before(async () => {
      wires = await openWires(era);
      if (era === 'modern') {
        // The SDK answers a modern client's first request (and accepts its envelope) on both transports: this is the
        // comparison with the SDK's own framing. The pipeline takes the ones after, over stdio and over HTTP alike
        // (test/server/http-modern-pipeline.test.ts shows which path answered).
        const first = requestOf({ name: 'first', body: use(0, 'echo', { text: 'first' }), id: 0 }, era);
        assert.deepEqual(await wires.stdio.exchange(first, answered(0)), await wires.http.exchange(first, answered(0)));
      }
    });
    after(async () => {
      await wires?.close();
    });

    for (const c of CASES.filter((c) => !c.eras || c.eras.includes(era))) {
      it(c.name, async () => {
        const request = requestOf(c, era);
        const overStdio = await wires.stdio.exchange(request, answered(c.id));
        const overHttp = await wires.http.exchange(request, answered(c.id));
        if (c.name.includes('malformed capabilities')) {
          // The SDK's HTTP entry checks the envelope itself (and names the key); over stdio the SDK Server answers it.
          // Either way a -32602, never a call.
          assert.equal((JSON.parse(overHttp.at(-1)!) as Last).error?.code, -32602);
        } else {
          assert.deepEqual(overHttp, overStdio);
        }
        checkCase(c, era, overStdio);
      });
    }

    it('the same call twice gets the same answer on each transport', async () => {
      const again = requestOf({ name: 'again', body: use(60, 'echo', { text: 'again' }), id: 60 }, era);
      for (const wire of [wires.stdio, wires.http]) {
        const first = await wire.exchange(again, answered(60));
        assert.deepEqual(await wire.exchange(again, answered(60)), first);
      }
    });

    it('a cancelled call gets no response on either transport, and the downstream call is cancelled', async () => {
      const hang = requestOf({ name: 'hang', body: use(30, 'hang'), id: 30 }, era);
      const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 30, reason: 'user' } };
      // A call after the cancelled one, to see the wire still answers (a modern client's ping gets "Method not found" here).
      const next = requestOf({ name: 'next', body: use(31, 'echo', { text: 'after the cancel' }), id: 31 }, era);
      const reached = async (file: string, event: string): Promise<boolean> =>
        waitFor(async () => (await fixtureEvents(file)).some((e) => e.event === event && e.tool === 'hang'), 10_000);

      const stdioSeen = await wires.stdio.exchange(hang, () => true);
      assert.ok(await reached(wires.events.stdio, 'call'), 'stdio: the call reached the server');
      await wires.stdio.exchange(cancel, () => true);
      assert.ok(await reached(wires.events.stdio, 'cancelled'), 'stdio: downstream cancelled');
      const afterCancel = await wires.stdio.exchange(next, answered(31));
      assert.ok(![...stdioSeen, ...afterCancel].some((m) => idOf(m) === 30), 'stdio: no response to a cancelled call');

      const abort = new AbortController();
      const pending = wires.http.post(hang, abort.signal).catch(() => ({ status: 0, messages: [] as string[] }));
      assert.ok(await reached(wires.events.http, 'call'), 'HTTP: the call reached the server');
      // A handshake-era client cancels with a notification in its session; a modern one has no session, and cancels
      // by closing the request's stream.
      if (era === 'legacy') await wires.http.post(cancel);
      else abort.abort();
      assert.ok(await reached(wires.events.http, 'cancelled'), 'HTTP: downstream cancelled');
      assert.deepEqual((await wires.http.post(next)).messages, afterCancel.filter((m) => idOf(m) === 31));
      abort.abort();
      const hung = await pending;
      assert.ok(!hung.messages.some((m) => idOf(m) === 30), 'HTTP: no response to a cancelled call');
    });

    it('HTTP answers an oversized body with status 413 and the same JSON-RPC error', async () => {
      const { status, messages } = await wires.http.post(requestOf({ name: 'big', body: use(40, 'echo', { text: 'q'.repeat(LIMIT) }), id: 40 }, era));
      assert.equal(status, 413);
      assert.equal(idOf(messages[0]!), 40);
      assert.equal((JSON.parse(messages[0]!) as { error: { data?: { limit_bytes?: number } } }).error.data?.limit_bytes, LIMIT);
      // The limit it was refused by is WORKBENCH_MAX_MESSAGE_BYTES, the one limit of both transports.
      const refusal = () => wires.httpLog().find((l) => l.fields.event === 'message_refused');
      await waitFor(() => refusal() !== undefined, { timeoutMs: 10_000, what: 'a message_refused log line' });
      const refused = refusal()!;
      assert.deepEqual({ status: refused.fields.http_status, limit: refused.fields.limit_bytes }, { status: 413, limit: LIMIT });
    });
  });
}
