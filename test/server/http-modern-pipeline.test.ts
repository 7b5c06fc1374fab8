import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { MODERN_ENVELOPE } from '../helpers/raw-clients.js';
import { fixtureEvents, fixtureServer, tempDir } from '../helpers/workbench-process.js';

// MCP 2026-07-28 over HTTP (README "One answer on every transport"): a use_tool or open_toolbox call the SDK would take
// as it is goes through the tool-call pipeline, as on stdio, and gets the bytes the SDK sends; anything else (a first
// envelope, a progress token, headers that disagree with the body) is the SDK's. /metrics says which path answered.


const useTool = (id: number, tool: string, args: Record<string, unknown>, meta: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: `fx__f__${tool}`, arguments: args }, _meta: { ...MODERN_ENVELOPE, ...meta } },
});

interface Answer {
  status: number;
  contentType: string | null;
  body: string;
}

describe('serve --http: modern tools/call through the tool-call pipeline', () => {
  let wb: HttpWorkbench;
  let events: string;
  let cleanup: () => Promise<void>;
  before(async () => {
    const dir = await tempDir('wb-modern-pipeline-');
    cleanup = dir.cleanup;
    events = join(dir.dir, 'events.log');
    wb = await startHttpWorkbench({ toolboxes: { fx: { mcpServers: { f: fixtureServer('--odd', '--log', events) } } } }, ['--http', '127.0.0.1:0', '--metrics']);
  });
  after(async () => {
    await wb?.stop();
    await cleanup?.();
  });

  /** POSTs a modern request with the standard headers taken from its body, `headers` overriding them. */
  const post = async (body: ReturnType<typeof useTool>, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(wb.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': body.method,
        'mcp-name': body.params.name,
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
  };

  /** The modern requests counted so far, by path. */
  const paths = async (): Promise<Record<string, number>> => {
    const text = await (await fetch(`${wb.origin}/metrics`)).text();
    const counts: Record<string, number> = { pipeline: 0, handed_over: 0, sdk: 0 };
    for (const match of text.matchAll(/^mcp_workbench_modern_http_requests_total\{path="(\w+)"\} (\d+)$/gm)) counts[match[1]!] = Number(match[2]);
    return counts;
  };

  it('answers the first request of an envelope through the SDK, and the same request after it through the pipeline, byte for byte', async () => {
    const request = useTool(1, 'echo', { text: 'same bytes' });
    const bySdk = await post(request);
    assert.deepEqual(await paths(), { pipeline: 0, handed_over: 0, sdk: 1 });
    const byPipeline = await post(request);
    assert.deepEqual(await paths(), { pipeline: 1, handed_over: 0, sdk: 1 });
    assert.deepEqual(byPipeline, bySdk);
    assert.equal(bySdk.status, 200);
    assert.equal(bySdk.contentType, 'application/json');
    const { result } = JSON.parse(bySdk.body) as { result: { resultType: string; content: { text: string }[] } };
    assert.equal(result.resultType, 'complete');
    assert.equal(result.content[0]?.text, 'same bytes');
  });

  it('hands an answer it cannot frame (an image) to the SDK, which frames it without a second call', async () => {
    const before = await paths();
    const answer = await post(useTool(2, 'image', {}));
    assert.equal(answer.status, 200);
    const { result } = JSON.parse(answer.body) as { result: { content: { type: string }[] } };
    assert.equal(result.content[0]?.type, 'image');
    const calls = (await fixtureEvents(events)).filter((e) => e.event === 'call' && e.tool === 'image');
    assert.equal(calls.length, 1, JSON.stringify(calls));
    assert.deepEqual(await paths(), { ...before, handed_over: before.handed_over! + 1 });
  });

  it('leaves a call with a progress token to the SDK', async () => {
    const before = await paths();
    const answer = await post(useTool(3, 'slow', { ms: 50, steps: 2 }, { progressToken: 'p-3' }));
    assert.equal(answer.status, 200);
    assert.match(answer.contentType ?? '', /text\/event-stream/);
    assert.deepEqual(await paths(), { ...before, sdk: before.sdk! + 1 });
  });

  for (const [what, headers, code] of [
    ['an Mcp-Name header that names another tool', { 'mcp-name': 'open_toolbox' }, -32020],
    ['an Mcp-Method header that names another method', { 'mcp-method': 'tools/list' }, -32020],
    ['an MCP-Protocol-Version header that names another revision', { 'mcp-protocol-version': '2025-11-25' }, -32020],
  ] as const) {
    it(`gives a request with ${what} the SDK's rejection`, async () => {
      const before = await paths();
      const answer = await post(useTool(4, 'echo', { text: 'x' }), headers);
      assert.equal(answer.status, 400, answer.body);
      const { error, id } = JSON.parse(answer.body) as { error: { code: number }; id: unknown };
      assert.equal(error.code, code);
      assert.equal(id, 4);
      assert.deepEqual(await paths(), { ...before, sdk: before.sdk! + 1 });
    });
  }
});
