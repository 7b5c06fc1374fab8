import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StreamableHTTPClientTransport, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import { eraClient } from '../helpers/era-workbench.js';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer } from '../helpers/workbench-process.js';

// The session limit (README "Serving over HTTP", "Limits") counts every client with downstream connections of its
// own: a handshake-era session, and an MCP 2026-07-28 client (one per token and set of declared capabilities), so
// one token cannot open unlimited server processes by declaring ever new capabilities.

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

describe('serve --http --max-sessions 2: handshake-era sessions and 2026-07-28 clients count alike', () => {
  let wb: HttpWorkbench;
  const clients: Client[] = [];

  before(async () => {
    wb = await startHttpWorkbench({ toolboxes: { fx: { mcpServers: { f: fixtureServer() } } } }, ['--http', '0', '--max-sessions', '2']);
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await wb?.stop();
  });

  const modern = async (capabilities: Parameters<typeof eraClient>[1]): Promise<Client> => {
    const client = eraClient('modern', capabilities);
    await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
    clients.push(client);
    return client;
  };
  const echo = async (client: Client, text: string): Promise<CallToolResult> =>
    (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text } } })) as CallToolResult;
  const post = (body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(wb.url, { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) });

  it('refuses a third client with 503, whether it declares new capabilities or opens a session; clients already in are served', async () => {
    const opened = await post(INITIALIZE);
    assert.equal(opened.status, 200, await opened.text());
    const sessionId = opened.headers.get('mcp-session-id')!;
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sessionId })).status, 202);
    const first = await modern({ sampling: {} });
    assert.equal((await echo(first, 'one')).content[0]?.type, 'text');

    // A third: the same (absent) token, capabilities never declared before. Before, each such client got its own
    // downstream processes, whatever the limit.
    await assert.rejects(modern({ sampling: {}, elicitation: {} }), /503/);
    const again = await post(INITIALIZE);
    assert.equal(again.status, 503, `a new handshake-era session is refused too: ${await again.text()}`);

    // The clients already in are served as before.
    const echoed = await echo(first, 'still');
    assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
    const ping = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': sessionId });
    assert.equal(ping.status, 200, await ping.text());

    // JSON-RPC 2.0: an empty batch is one Invalid Request, inside a session as without one.
    for (const headers of [{ 'mcp-session-id': sessionId }, {}] as Record<string, string>[]) {
      const empty = await post([], headers);
      assert.equal(empty.status, 400);
      assert.equal(((await empty.json()) as { error?: { code?: number } }).error?.code, -32600, JSON.stringify(headers));
    }
    await fetch(wb.url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
  });
});

describe('serve --http --max-sessions 4 with two tokens: each user holds at most its share (2)', () => {
  let wb: HttpWorkbench;
  const clients: Client[] = [];

  before(async () => {
    wb = await startHttpWorkbench({ toolboxes: { fx: { mcpServers: { f: fixtureServer() } } } }, ['--http', '0', '--max-sessions', '4'], { WORKBENCH_TOKEN: 'token-of-alice,token-of-bob' });
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await wb?.stop();
  });

  const open = (token: string): Promise<Response> =>
    fetch(wb.url, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${token}` }, body: JSON.stringify(INITIALIZE) });
  const modern = async (token: string, capabilities: Parameters<typeof eraClient>[1] = {}): Promise<Client> => {
    const client = eraClient('modern', capabilities);
    await client.connect(new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  };

  it('one token that keeps opening sessions is refused past its share, naming it; the other user still gets in, in both eras', async () => {
    assert.equal((await open('token-of-alice')).status, 200);
    await modern('token-of-alice', { sampling: {} });
    const third = await open('token-of-alice');
    assert.equal(third.status, 503);
    assert.match(await third.text(), /this token holds its share of the session limit \(2 of 4, shared by 2 tokens\)/);
    await assert.rejects(modern('token-of-alice', { elicitation: {} }), /503/);
    // Bob is not locked out by Alice's sessions.
    assert.equal((await open('token-of-bob')).status, 200);
    const bob = await modern('token-of-bob');
    const echoed = (await bob.callTool({ name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'bob' } } })) as CallToolResult;
    assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
  });
});

// A request refused before MCP handling (its envelope names a revision not served, is malformed, or disagrees with
// its headers) is no client: it used to open its token's surface for the capabilities it declared all the same, which
// then counted against the session limit (and the token's share) until it expired idle, 10 minutes later.
describe('serve --http with two tokens: a refused MCP 2026-07-28 request takes no place in the session limit', () => {
  let wb: HttpWorkbench;
  const clients: Client[] = [];
  const META = 'io.modelcontextprotocol';
  const envelope = (capabilities: Record<string, unknown>, version = '2026-07-28'): Record<string, unknown> => ({
    [`${META}/protocolVersion`]: version,
    [`${META}/clientInfo`]: { name: 'raw', version: '1' },
    [`${META}/clientCapabilities`]: capabilities,
  });

  before(async () => {
    wb = await startHttpWorkbench({ toolboxes: { fx: { mcpServers: { f: fixtureServer() } } } }, ['--http', '0', '--max-sessions', '4'], { WORKBENCH_TOKEN: 'token-of-alice,token-of-bob' });
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await wb?.stop();
  });

  const sessions = async (): Promise<number> => ((await (await fetch(`${wb.origin}/healthz`)).json()) as { sessions: number }).sessions;
  const refused = async (body: unknown, headers: Record<string, string>): Promise<void> => {
    const response = await fetch(wb.url, { method: 'POST', headers: { ...HEADERS, authorization: 'Bearer token-of-alice', ...headers }, body: JSON.stringify(body) });
    assert.equal(response.status, 400, await response.text());
  };

  it('opens no surface for it: the token can still open its share of clients afterwards', async () => {
    const list = (meta: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } });
    const modernHeaders = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
    await refused(list(envelope({ sampling: {} }, '2099-01-01')), {});
    await refused(list(envelope({ elicitation: {} }, '2099-01-01')), {});
    await refused(list(envelope({ roots: {} })), { ...modernHeaders, 'mcp-method': 'tools/call' });
    await refused(list({ ...envelope({ tasks: {} }), [`${META}/clientInfo`]: 'not an object' }), modernHeaders);
    assert.equal(await sessions(), 0, 'no client is counted for refused requests');

    for (const capabilities of [{ sampling: {} }, { elicitation: {} }]) {
      const client = eraClient('modern', capabilities);
      await client.connect(new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers: { authorization: 'Bearer token-of-alice' } } }));
      clients.push(client);
      const echoed = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'in' } } })) as CallToolResult;
      assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
    }
    assert.equal(await sessions(), 2);

    // At its share, a request that would be refused anyway gets its own answer, not the limit's 503 (before, the
    // limit was checked first): a client told "retry later" would retry a request that can never succeed.
    await refused(list(envelope({ roots: {} }, '2099-01-01')), {});
    await refused(list(envelope({ roots: {} })), { ...modernHeaders, 'mcp-method': 'tools/call' });
    await refused(list({ ...envelope({ tasks: {} }), [`${META}/clientInfo`]: 'not an object' }), modernHeaders);
    const body = JSON.stringify(list(envelope({ roots: {} })));
    const full = await fetch(wb.url, { method: 'POST', headers: { ...HEADERS, authorization: 'Bearer token-of-alice', ...modernHeaders }, body });
    assert.equal(full.status, 503, 'a well-formed request from a new capability set is refused by the limit');
    assert.match(await full.text(), /share of the session limit/);
    assert.equal(await sessions(), 2);
  });
});

