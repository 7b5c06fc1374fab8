import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, type EraName, type EraWorkbench, type Over } from '../helpers/era-workbench.js';
import { startFaultingProxy, type FaultingProxy } from '../helpers/faulting-proxy.js';
import { startEverythingHttp, startModernHttp, type ChildHttpServer } from '../helpers/http-servers.js';
import { fixtureServer, textOf } from '../helpers/workbench-process.js';

// A remote server that was connected fine fails later in the day: its gateway answers a call with 503, its token is
// revoked (401), a connection is cut before the answer, a sign-in page stands in front of it, it stops listening and comes back. Each call fails alone, as an
// isError result naming the server, the cause and the next step (retryable as the cause says), with no credential in
// the text or the logs; the healthy stdio server next to it and the next call after the fault are unaffected. Both
// downstream eras (server-everything, handshake era; the modern-only fixture), both client eras over stdio, and the
// HTTP front once.

const SECRET = `tok-${Math.random().toString(36).slice(2)}-secret`;

interface ErrorMeta {
  code?: string;
  retryable?: boolean;
  server?: string;
  hint?: string;
  failure?: { kind?: string; httpStatus?: number };
}

const metaOf = (result: CallToolResult): ErrorMeta => (result._meta?.['mcp-workbench/error'] ?? {}) as ErrorMeta;

describe('a connected remote server that fails its calls later', () => {
  let everything: ChildHttpServer;
  let modern: { url: string; close(): Promise<void> };
  let legacyProxy: FaultingProxy;
  let modernProxy: FaultingProxy;

  before(async () => {
    [everything, modern] = await Promise.all([startEverythingHttp('streamableHttp'), startModernHttp()]);
    [legacyProxy, modernProxy] = await Promise.all([startFaultingProxy(`${everything.origin}/mcp`), startFaultingProxy(modern.url)]);
  });
  after(async () => {
    await Promise.allSettled([legacyProxy?.close(), modernProxy?.close()]);
    await Promise.allSettled([everything?.close(), modern?.close()]);
  });

  const config = (): unknown => ({
    toolboxes: {
      day: {
        mcpServers: {
          local: fixtureServer(),
          old: { type: 'http', url: legacyProxy.url, headers: { Authorization: `Bearer \${REMOTE_TOKEN}` } },
          new: { type: 'http', url: modernProxy.url, headers: { Authorization: `Bearer \${REMOTE_TOKEN}` } },
        },
      },
    },
  });

  /** Calls echo on each remote server and the local one, checks each answer with `check` (remote) and that local works. */
  async function each(wb: EraWorkbench, check: (server: 'old' | 'new', result: CallToolResult) => void): Promise<void> {
    const use = async (tool: string, args: Record<string, unknown>): Promise<CallToolResult> =>
      (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'day', tool_name: tool, arguments: args } })) as CallToolResult;
    check('old', await use('day__old__echo', { message: 'hi' }));
    check('new', await use('day__new__echo', { text: 'hi' }));
    assert.match(textOf(await use('day__local__echo', { text: 'local' })), /local/);
  }

  const works = (server: string, result: CallToolResult): void => {
    assert.notEqual(result.isError, true, `${server}: ${textOf(result)}`);
    assert.match(textOf(result), /hi/i);
  };

  const failsWith = (expected: { status?: number; kind: string; retryable: boolean; text: RegExp; hint: RegExp }) => (server: string, result: CallToolResult): void => {
    const text = textOf(result);
    const meta = metaOf(result);
    assert.equal(result.isError, true, text);
    assert.equal(meta.code, 'CALL_FAILED', text);
    assert.equal(meta.server, server);
    assert.match(text, new RegExp(`server "${server}" of toolbox "day"`));
    assert.match(text, expected.text);
    assert.equal(meta.failure?.kind, expected.kind, text);
    assert.equal(meta.failure?.httpStatus, expected.status, text);
    assert.equal(meta.retryable, expected.retryable, text);
    assert.match(meta.hint ?? '', expected.hint, text);
    assert.ok(!text.includes(SECRET) && !/\n\s+at /.test(text), `no credential, no stack: ${text}`);
  };

  async function fullDay(over: Over, era: EraName): Promise<void> {
    const wb = await startEra(over, era, config(), undefined, {}, { env: { REMOTE_TOKEN: SECRET, WORKBENCH_LOG_LEVEL: 'debug' } });
    const proxies = [legacyProxy, modernProxy];
    const fail = (how: Parameters<FaultingProxy['failCalls']>[0]): void => proxies.forEach((p) => p.failCalls(how));
    try {
      await each(wb, works);
      fail({ status: 503, body: 'upstream overloaded' });
      await each(wb, failsWith({ status: 503, kind: 'http-status', retryable: true, text: /HTTP 503/, hint: /later/ }));
      // A server that quotes the token it refused: the quote is shown, the token never.
      fail({ status: 401, body: `token ${SECRET} was revoked` });
      await each(wb, failsWith({ status: 401, kind: 'http-status', retryable: false, text: /HTTP 401/, hint: /credentials.*"headers"/ }));
      // A 400 that is about the call, not the session: said as it is, twice (a new session does not cure it).
      fail({ status: 400, body: 'bad call' });
      await each(wb, failsWith({ status: 400, kind: 'http-status', retryable: false, text: /HTTP 400 \(Bad Request\): bad call/, hint: /"url"/ }));
      await each(wb, failsWith({ status: 400, kind: 'http-status', retryable: false, text: /HTTP 400/, hint: /"url"/ }));
      fail('cut');
      await each(wb, failsWith({ kind: 'closed', retryable: true, text: /connection to the server was lost/, hint: /safe to repeat/ }));
      fail('html');
      await each(wb, failsWith({ kind: 'other', retryable: false, text: /text\/html/, hint: /"url"/ }));
      fail('pass');
      await each(wb, works);
      await Promise.all(proxies.map((p) => p.stop()));
      await each(wb, failsWith({ kind: 'unreachable', retryable: true, text: /could not be reached: connection refused/, hint: /next call/ }));
      await Promise.all(proxies.map((p) => p.start()));
      await each(wb, works);
      assert.ok(!wb.stderr().includes(SECRET), 'the token never reaches the logs');
    } finally {
      fail('pass');
      await wb.close();
    }
  }

  /**
   * server-everything restarted on the same port: it knows no session any more and, like servers built on the SDK's
   * own example, answers the old session id with 400 "No valid session ID provided" (the spec's answer is 404).
   */
  async function restart(era: EraName): Promise<void> {
    let restarting = await startEverythingHttp('streamableHttp');
    const port = new URL(restarting.origin).port;
    const wb = await startEra('stdio', era, { toolboxes: { day: { mcpServers: { local: fixtureServer(), re: { type: 'http', url: `${restarting.origin}/mcp` } } } } });
    const use = async (): Promise<CallToolResult> =>
      (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'day', tool_name: 'day__re__echo', arguments: { message: 'hi' } } })) as CallToolResult;
    try {
      works('re', await use());
      await restarting.close();
      failsWith({ kind: 'unreachable', retryable: true, text: /connection refused/, hint: /next call/ })('re', await use());
      restarting = await startEverythingHttp('streamableHttp', { PORT: port });
      works('re', await use());
      works('re', await use());
    } finally {
      await wb.close();
      await restarting.close();
    }
  }

  /** The same faults in front of a legacy HTTP+SSE server (type "sse"): its messages are POSTed apart from the answers. */
  async function legacySse(era: EraName): Promise<void> {
    const sse = await startEverythingHttp('sse');
    const proxy = await startFaultingProxy(`${sse.origin}/sse`);
    const wb = await startEra('stdio', era, { toolboxes: { day: { mcpServers: { local: fixtureServer(), sse: { type: 'sse', url: proxy.url, headers: { Authorization: `Bearer \${REMOTE_TOKEN}` } } } } } }, undefined, {}, { env: { REMOTE_TOKEN: SECRET } });
    const use = async (): Promise<CallToolResult> =>
      (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'day', tool_name: 'day__sse__echo', arguments: { message: 'hi' } } })) as CallToolResult;
    try {
      works('sse', await use());
      proxy.failCalls({ status: 503, body: 'upstream overloaded' });
      failsWith({ status: 503, kind: 'http-status', retryable: true, text: /HTTP 503/, hint: /later/ })('sse', await use());
      proxy.failCalls({ status: 401, body: `token ${SECRET} was revoked` });
      failsWith({ status: 401, kind: 'http-status', retryable: false, text: /HTTP 401/, hint: /credentials.*"headers"/ })('sse', await use());
      proxy.failCalls('html');
      failsWith({ kind: 'other', retryable: false, text: /text\/html/, hint: /"url"/ })('sse', await use());
      proxy.failCalls('pass');
      works('sse', await use());
      assert.ok(!wb.stderr().includes(SECRET), 'the token never reaches the logs');
    } finally {
      await wb.close();
      await proxy.close();
      await sse.close();
    }
  }

  /**
   * A server (or its gateway) that accepts a new session but answers 404 to every later request: one new session is
   * tried, then each call reports the 404 as it is, with no new session per call, until a call works again. The modern
   * server has no session to renew: its 404 is reported at once.
   */
  async function notFoundAfterHandshake(era: EraName): Promise<void> {
    const wb = await startEra('stdio', era, config(), undefined, {}, { env: { REMOTE_TOKEN: SECRET } });
    const proxies = [legacyProxy, modernProxy];
    const initializes = (): number => legacyProxy.forwarded('initialize');
    try {
      await each(wb, works);
      const before = initializes();
      proxies.forEach((p) => p.failCalls({ status: 404, body: 'no such session' }));
      for (let i = 0; i < 4; i++) await each(wb, failsWith({ status: 404, kind: 'http-status', retryable: false, text: /HTTP 404 \(Not Found\): no such session\./, hint: /"url"/ }));
      assert.equal(initializes() - before, 1, 'one new session for four failed calls, not one per call');
      proxies.forEach((p) => p.failCalls('pass'));
      await each(wb, works);
      // A call worked: the next 404 may mean a restart again, and is given one new session.
      proxies.forEach((p) => p.failCalls({ status: 404 }));
      await each(wb, failsWith({ status: 404, kind: 'http-status', retryable: false, text: /HTTP 404/, hint: /"url"/ }));
      await each(wb, failsWith({ status: 404, kind: 'http-status', retryable: false, text: /HTTP 404/, hint: /"url"/ }));
      assert.equal(initializes() - before, 2, 'one more new session after the call that worked');
    } finally {
      proxies.forEach((p) => p.failCalls('pass'));
      await wb.close();
    }
  }

  for (const era of ERAS) {
    it(`does not start a new session for every call of a server that answers 404 to all but its handshake (${era} client over stdio)`, () => notFoundAfterHandshake(era));
    it(`answers each failed call of a legacy SSE server at once, naming the status (${era} client over stdio)`, () => legacySse(era));
    it(`reconnects to a remote server that restarted and answers its old session with 400 (${era} client over stdio)`, () => restart(era));
    it(`answers each failed call at once as an isError result that names the server, cause and next step (${era} client over stdio)`, () => fullDay('stdio', era));
  }
  it('does the same for a modern client over the HTTP front', () => fullDay('http', 'modern'));
});
