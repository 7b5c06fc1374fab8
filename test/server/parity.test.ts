import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { MODERN_ENVELOPE, rawHttp, rawModernHttp, rawModernStdio, rawStdio, type RawWire } from '../helpers/raw-clients.js';
import { fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * The same requests over stdio and over Streamable HTTP must get the same answers, byte for byte (README "Serving
 * over HTTP"): both transports hand use_tool and open_toolbox to one pipeline, and frame only.
 */
const LIMIT = 64 * 1024;
const env = { WORKBENCH_MAX_MESSAGE_BYTES: String(LIMIT) };

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

const CASES: { name: string; body: unknown; id: unknown }[] = [
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
];

describe('stdio and HTTP give the same answers', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let stdio: RawWire;
  let http: HttpWorkbench;
  let overHttp: Awaited<ReturnType<typeof rawHttp>>;
  const logs = { stdio: '', http: '' };

  before(async () => {
    ({ dir, cleanup } = await tempDir('wb-parity-'));
    logs.stdio = join(dir, 'stdio.log');
    logs.http = join(dir, 'http.log');
    const config = (log: string) => ({ toolboxes: { fx: { mcpServers: { f: fixtureServer('--odd', '--log', log) } } } });
    stdio = await rawStdio(config(logs.stdio), env);
    http = await startHttpWorkbench(config(logs.http), ['--http', '127.0.0.1:0'], env);
    overHttp = await rawHttp(http.url);
  });

  after(async () => {
    await stdio?.close();
    await overHttp?.close();
    await http?.stop();
    await cleanup?.();
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const overStdio = await stdio.exchange(c.body, answered(c.id));
      const viaHttp = await overHttp.exchange(c.body, answered(c.id));
      assert.deepEqual(viaHttp, overStdio);
      const last = JSON.parse(overStdio.at(-1)!) as { result?: { _meta?: Record<string, unknown> }; error?: { code: number } };
      if (c.name.includes('over the size limit')) assert.equal(last.error?.code, -32600);
      // Protocol faults are JSON-RPC errors; a meta-tool's malformed parameters are refusals (README "Errors").
      if (c.name.startsWith('tools/call with arguments') || c.name === 'an unknown top-level tool') assert.equal(last.error?.code, -32602);
      if (c.name === 'use_tool without toolbox_name' || c.name.startsWith('use_tool with an unknown parameter')) {
        assert.deepEqual(last.result?._meta, { 'mcp-workbench/error': { code: 'INVALID_PARAMETERS', retryable: false } });
      }
      if (c.name.startsWith('a content block of an unknown type')) {
        assert.deepEqual(last.result, { content: [{ type: 'hologram', frames: 3 }, { type: 'text', text: 'and text' }], vendorField: { kept: true } });
      }
      if (c.name.includes('not base64')) assert.deepEqual(last.result, { content: [{ type: 'image', data: 'not base64 at all!', mimeType: 'image/png' }] });
      if (c.name.startsWith('progress')) assert.ok(overStdio.length > 1, 'progress came before the result');
      if (c.name.includes('_meta (trace context)')) {
        const text = (last.result as { content: { text: string }[] }).content[0]!.text;
        assert.deepEqual(JSON.parse(text), { traceparent: '00-abc-def-01', 'x/vendor': { a: 1 } });
      }
    });
  }

  it('a cancelled call gets no response on either transport, and the downstream call is cancelled', async () => {
    const hang = use(30, 'hang');
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 30, reason: 'user' } };
    const ping = { jsonrpc: '2.0', id: 31, method: 'ping' };

    const stdioSeen = await stdio.exchange(hang, () => true);
    assert.ok(await waitFor(async () => (await readFile(logs.stdio, 'utf8')).includes('"tool":"hang"'), 10_000));
    await stdio.exchange(cancel, () => true);
    assert.ok(await waitFor(async () => (await readFile(logs.stdio, 'utf8')).includes('"event":"cancelled"'), 10_000), 'stdio: downstream cancelled');
    const afterCancel = await stdio.exchange(ping, answered(31));
    assert.ok(![...stdioSeen, ...afterCancel].some((m) => (JSON.parse(m) as { id?: unknown }).id === 30), 'stdio: no response to a cancelled call');

    const abort = new AbortController();
    const pending = overHttp.post(hang, abort.signal).catch(() => ({ status: 0, messages: [] as string[] }));
    assert.ok(await waitFor(async () => (await readFile(logs.http, 'utf8')).includes('"tool":"hang"'), 10_000));
    await overHttp.post(cancel);
    assert.ok(await waitFor(async () => (await readFile(logs.http, 'utf8')).includes('"event":"cancelled"'), 10_000), 'HTTP: downstream cancelled');
    assert.deepEqual((await overHttp.post(ping)).messages, afterCancel.filter((m) => (JSON.parse(m) as { id?: unknown }).id === 31));
    abort.abort();
    const hung = await pending;
    assert.ok(!hung.messages.some((m) => (JSON.parse(m) as { id?: unknown }).id === 30), 'HTTP: no response to a cancelled call');
  });

  it('HTTP answers an oversized body with status 413 and the same JSON-RPC error', async () => {
    const { status, messages } = await overHttp.post(use(40, 'echo', { text: 'q'.repeat(LIMIT) }));
    assert.equal(status, 413);
    assert.equal((JSON.parse(messages[0]!) as { id: unknown }).id, 40);
  });
});

/**
 * The MCP 2026-07-28 column: over stdio the tool-call pipeline answers a modern client's use_tool and open_toolbox (or
 * hands the request over to the SDK Server when it cannot frame the answer itself); over HTTP the SDK Server answers
 * every modern request. The two must agree byte for byte, the SDK being the reference.
 */
describe('MCP 2026-07-28: the pipeline (stdio) and the SDK Server (HTTP) give the same answers', () => {
  /** The case's request as a modern client sends it: the envelope in `_meta`, then the client's own keys. */
  const modern = (body: unknown, params: Record<string, unknown> = {}) => {
    const request = body as { params: Record<string, unknown> & { _meta?: Record<string, unknown> } };
    return { ...request, params: { ...request.params, ...params, _meta: { ...MODERN_ENVELOPE, ...request.params._meta } } };
  };
  const MODERN_CASES: { name: string; body: unknown; id: unknown }[] = [
    ...CASES.filter((c) => typeof c.body === 'object' && (c.body as { method?: string }).method === 'tools/call' && !c.name.includes('size limit')).map((c) => ({
      ...c,
      body: modern(c.body),
    })),
    { name: 'progress token after other _meta keys', body: modern(use(50, 'meta_echo', {}, { 'x/first': 1, progressToken: 'p-50' })), id: 50 },
    { name: 'a numeric progress token, with progress', body: modern(use(51, 'slow', { ms: 100, steps: 2 }, { progressToken: 51 })), id: 51 },
    { name: 'a task-augmented call', body: modern(use(52, 'echo', { text: 'task' }), { task: { ttl: 1000 } }), id: 52 },
    { name: 'a requestState that was never handed out', body: modern(use(53, 'echo', { text: 'x' }), { requestState: 'forged' }), id: 53 },
    { name: 'inputResponses without a requestState', body: modern(use(54, 'echo', { text: 'x' }), { inputResponses: {} }), id: 54 },
    {
      name: 'a malformed capabilities envelope',
      body: { ...modern(use(55, 'echo', { text: 'x' })), params: { ...modern(use(55, 'echo', { text: 'x' })).params, _meta: { ...MODERN_ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': 'all' } } },
      id: 55,
    },
    { name: 'other declared capabilities', body: { ...modern(use(56, 'echo', { text: 'x' })), params: { ...modern(use(56, 'echo', { text: 'x' })).params, _meta: { ...MODERN_ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } } } }, id: 56 },
    { name: 'open_toolbox of an unknown toolbox', body: modern(call(57, 'open_toolbox', { toolbox_name: 'nope' })), id: 57 },
  ];

  let dir: string;
  let cleanup: () => Promise<void>;
  let stdio: RawWire;
  let http: HttpWorkbench;
  let overHttp: RawWire;

  before(async () => {
    ({ dir, cleanup } = await tempDir('wb-parity-modern-'));
    const config = (log: string) => ({ toolboxes: { fx: { mcpServers: { f: fixtureServer('--odd', '--log', log) } } } });
    stdio = await rawModernStdio(config(join(dir, 'stdio.log')), env);
    http = await startHttpWorkbench(config(join(dir, 'http.log')), ['--http', '127.0.0.1:0'], env);
    overHttp = rawModernHttp(http.url);
    // The SDK answers a client's first request (and accepts its envelope); the pipeline may take the ones after.
    const first = modern(use(0, 'echo', { text: 'first' }));
    assert.deepEqual(await stdio.exchange(first, answered(0)), await overHttp.exchange(first, answered(0)));
  });

  after(async () => {
    await stdio?.close();
    await http?.stop();
    await cleanup?.();
  });

  for (const c of MODERN_CASES) {
    it(c.name, async () => {
      const overStdio = await stdio.exchange(c.body, answered(c.id));
      const viaHttp = await overHttp.exchange(c.body, answered(c.id));
      const last = JSON.parse(overStdio.at(-1)!) as { result?: { resultType?: string; _meta?: Record<string, unknown> }; error?: { code: number; message: string } };
      if (c.name.includes('malformed capabilities')) {
        // The SDK's HTTP entry checks the envelope itself (and names the key); over stdio the SDK Server answers it, as
        // it did before the pipeline took modern calls. Either way a -32602, never a call.
        assert.equal(last.error?.code, -32602);
        assert.equal(last.error?.message, 'Invalid _meta envelope for protocol revision 2026-07-28: Invalid input: expected object, received string');
        assert.equal((JSON.parse(viaHttp.at(-1)!) as { error?: { code: number } }).error?.code, -32602);
        return;
      }
      assert.deepEqual(overStdio, viaHttp);
      if (last.result) {
        assert.equal(last.result.resultType, 'complete');
        assert.ok(last.result._meta?.['io.modelcontextprotocol/serverInfo'], 'the server identity is stamped');
      }
      if (c.name.includes('with progress')) assert.ok(overStdio.length > 1, 'progress came before the result');
    });
  }

  it('the same call twice gets the same answer (the second after the envelope is known)', async () => {
    const again = (id: number) => modern(use(id, 'echo', { text: 'again' }));
    const first = await stdio.exchange(again(60), answered(60));
    const second = await stdio.exchange(again(60), answered(60));
    assert.deepEqual(second, first);
  });
});
