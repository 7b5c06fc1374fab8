import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import { startEverythingHttp, startRecordingProxy, type ChildHttpServer, type RecordingProxy } from '../helpers/http-servers.js';
import { sampleArgs } from '../helpers/sample-args.js';
import { startWorkbench, textOf, workbenchErrorCode, type RunningWorkbench } from '../helpers/workbench-process.js';
import { logLines } from '../helpers/log-lines.js';

async function open(wb: RunningWorkbench, toolbox: string): Promise<OpenToolboxResult> {
  const result = (await wb.call('open_toolbox', { toolbox_name: toolbox })) as CallToolResult;
  assert.notEqual(result.isError, true, textOf(result));
  return result.structuredContent as OpenToolboxResult;
}

describe('remote downstream servers (Streamable HTTP and legacy SSE, on loopback)', () => {
  let streamable: ChildHttpServer;
  let sse: ChildHttpServer;

  before(async () => {
    [streamable, sse] = await Promise.all([startEverythingHttp('streamableHttp'), startEverythingHttp('sse')]);
  });
  after(async () => {
    await Promise.allSettled([streamable?.close(), sse?.close()]);
  });

  it('a call in flight when its Streamable HTTP server dies ends as a lost connection (retryable), not a timeout', async () => {
    const dying = await startEverythingHttp('streamableHttp');
    const wb = await startWorkbench({ toolboxes: { web: { mcpServers: { remote: { type: 'http', url: `${dying.origin}/mcp`, timeoutMs: 30_000 } } } } });
    try {
      await open(wb, 'web');
      const call = wb.useTool('web', 'web__remote__trigger-long-running-operation', { duration: 20, steps: 20 });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      process.kill(dying.pid, 'SIGKILL');
      const result = await call;
      assert.equal(result.isError, true, textOf(result));
      assert.equal(workbenchErrorCode(result), 'CALL_FAILED', textOf(result));
      assert.match(textOf(result), /connection to the server was lost before it answered/);
      const error = (result._meta as Record<string, { retryable?: boolean; failure?: { kind?: string } }>)['mcp-workbench/error'];
      assert.equal(error?.retryable, true);
      assert.equal(error?.failure?.kind, 'closed');
    } finally {
      await wb.close();
      await dying.close();
    }
  });

  it('holds a Streamable HTTP server to the message size limit, answering the call at once', async () => {
    // get-env returns the server's environment: two big variables make that result larger than the limit.
    const big = await startEverythingHttp('streamableHttp', { BIG_1: 'b'.repeat(100 * 1024), BIG_2: 'c'.repeat(100 * 1024) });
    const wb = await startWorkbench(
      { toolboxes: { remote: { mcpServers: { big: { type: 'http', url: `${big.origin}/mcp` } } } } },
      { env: { WORKBENCH_MAX_MESSAGE_BYTES: String(128 * 1024) } },
    );
    try {
      const result = await wb.useTool('remote', 'remote__big__get-env', {});
      assert.equal(workbenchErrorCode(result), 'MESSAGE_TOO_LARGE', textOf(result));
      assert.match(textOf(await wb.useTool('remote', 'remote__big__echo', { message: 'still here' })), /still here/);
    } finally {
      await wb.close();
      await big.close();
    }
  });

  it('waits for a remote server whose first answer takes 4 s, within its connectTimeoutMs (the era probe has no shorter limit)', async () => {
    const slow = await startRecordingProxy(streamable.origin, { firstRequestDelayMs: 4_000 });
    const wb = await startWorkbench({ toolboxes: { remote: { mcpServers: { slow: { type: 'http', url: `${slow.origin}/mcp`, connectTimeoutMs: 30_000 } } } } });
    try {
      const result = await wb.useTool('remote', 'remote__slow__echo', { message: 'after a cold start' });
      assert.notEqual(result.isError, true, textOf(result));
      assert.match(textOf(result), /after a cold start/);
    } finally {
      await wb.close();
      await slow.close();
    }
  });

  it('uses a Streamable HTTP server and an SSE server through one toolbox, every listed tool callable', async () => {
    const wb = await startWorkbench({
      toolboxes: {
        remote: {
          description: 'server-everything over HTTP',
          mcpServers: {
            streamable: { type: 'http', url: `${streamable.origin}/mcp` },
            legacy: { type: 'sse', url: `${sse.origin}/sse` },
          },
        },
      },
    });
    try {
      const catalog = await open(wb, 'remote');
      assert.deepEqual(catalog.servers_failed, []);
      assert.deepEqual([...catalog.servers_connected].sort(), ['legacy', 'streamable']);
      for (const server of ['streamable', 'legacy']) {
        const echo = await wb.useTool('remote', `remote__${server}__echo`, { message: `hello ${server}` });
        assert.notEqual(echo.isError, true, textOf(echo));
        assert.match(textOf(echo), new RegExp(`hello ${server}`));
      }
      for (const tool of catalog.tools) {
        const args =
          tool.original_name === 'trigger-long-running-operation' ? { duration: 0.2, steps: 2 } : sampleArgs(tool.inputSchema as never);
        const result = await wb.useTool('remote', tool.name, args);
        assert.equal(workbenchErrorCode(result), undefined, `${tool.name}: ${textOf(result)}`);
      }
      assert.deepEqual(await wb.descendants(), [], 'remote servers spawn nothing');
    } finally {
      await wb.close();
    }
  });

  it('falls back to SSE (with a fresh client) for an http entry that points at a legacy SSE server, and says so once', async () => {
    const wb = await startWorkbench(
      { toolboxes: { old: { mcpServers: { everything: { type: 'http', url: `${sse.origin}/sse` } } } } },
      { env: { WORKBENCH_LOG_FORMAT: 'json' } },
    );
    try {
      const catalog = await open(wb, 'old');
      assert.deepEqual(catalog.servers_failed, []);
      assert.ok(catalog.tools.some((t) => t.name === 'old__everything__echo'));
      const echo = await wb.useTool('old', 'old__everything__echo', { message: 'via fallback' });
      assert.match(textOf(echo), /via fallback/);
      await open(wb, 'old');
      const notes = logLines(wb.stderr()).filter((l) => l.scope === 'old/everything' && l.fields.transport === 'sse');
      assert.equal(notes.length, 1, wb.stderr());
    } finally {
      await wb.close();
    }
  });

  it('sends the user info of a url (written with ${VAR}, as migrate writes it) as Authorization: Basic, over http and sse', async () => {
    const [httpProxy, sseProxy] = await Promise.all([startRecordingProxy(streamable.origin), startRecordingProxy(sse.origin)]);
    const hostOf = (origin: string): string => origin.replace('http://', '');
    const wb = await startWorkbench(
      {
        toolboxes: {
          web: {
            mcpServers: {
              basic: { type: 'http', url: `http://\${U}:\${P}@${hostOf(httpProxy.origin)}/mcp` },
              basicsse: { type: 'sse', url: `http://\${U}:\${P}@${hostOf(sseProxy.origin)}/sse` },
            },
          },
        },
      },
      { env: { U: 'svc', P: 'pw%40LIT-9999' } },
    );
    try {
      const catalog = await open(wb, 'web');
      assert.deepEqual(catalog.servers_failed, [], wb.stderr());
      for (const server of ['basic', 'basicsse']) {
        const echo = await wb.useTool('web', `web__${server}__echo`, { message: `hello ${server}` });
        assert.match(textOf(echo), new RegExp(`hello ${server}`));
      }
      const expected = `Basic ${Buffer.from('svc:pw@LIT-9999').toString('base64')}`;
      for (const proxy of [httpProxy, sseProxy]) {
        assert.ok(proxy.requests.length > 0);
        for (const r of proxy.requests) assert.equal(r.headers.authorization, expected, `${r.method} ${r.path}`);
      }
      assert.ok(!wb.stderr().includes('pw@LIT-9999') && !wb.stderr().includes('pw%40LIT-9999'), wb.stderr());
    } finally {
      await wb.close();
      await Promise.allSettled([httpProxy.close(), sseProxy.close()]);
    }
  });

  describe('configured headers', () => {
    const secret = `s3cret-${Math.random().toString(36).slice(2)}-value`;
    let httpProxy: RecordingProxy;
    let sseProxy: RecordingProxy;
    let wb: RunningWorkbench;

    before(async () => {
      [httpProxy, sseProxy] = await Promise.all([startRecordingProxy(streamable.origin), startRecordingProxy(sse.origin)]);
      wb = await startWorkbench(
        {
          toolboxes: {
            keyed: {
              mcpServers: {
                streamable: { type: 'http', url: `${httpProxy.origin}/mcp`, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}', 'X-Api-Key': '${REMOTE_TOKEN}' } },
                legacy: { type: 'sse', url: `${sseProxy.origin}/sse`, headers: { 'X-Api-Key': '${REMOTE_TOKEN}' } },
              },
            },
          },
        },
        { env: { REMOTE_TOKEN: secret, WORKBENCH_LOG_LEVEL: 'debug' } },
      );
    });
    after(async () => {
      await wb?.close();
      await Promise.allSettled([httpProxy?.close(), sseProxy?.close()]);
    });

    it('sends the env-expanded headers from the config with every request, and never logs their values', async () => {
      await open(wb, 'keyed');
      for (const server of ['streamable', 'legacy']) {
        const echo = await wb.useTool('keyed', `keyed__${server}__echo`, { message: 'with headers' });
        assert.match(textOf(echo), /with headers/);
      }
      assert.ok(httpProxy.requests.some((r) => r.method === 'POST') && httpProxy.requests.some((r) => r.method === 'GET'));
      for (const r of httpProxy.requests) {
        assert.equal(r.headers['x-api-key'], secret, `${r.method} ${r.path}`);
        assert.equal(r.headers.authorization, `Bearer ${secret}`, `${r.method} ${r.path}`);
      }
      assert.ok(sseProxy.requests.some((r) => r.method === 'GET' && r.path === '/sse'), 'the event stream went through the proxy');
      assert.ok(sseProxy.requests.some((r) => r.method === 'POST' && r.path.startsWith('/message')), 'messages went through the proxy');
      for (const r of sseProxy.requests) {
        assert.equal(r.headers['x-api-key'], secret, `${r.method} ${r.path}`);
        assert.equal(r.headers.authorization, undefined, 'only configured headers are sent');
      }
      assert.ok(logLines(wb.stderr()).some((l) => l.level === 'debug'), 'debug logging was on');
      assert.ok(!wb.stderr().includes(secret), 'the header value never appears on stderr');
    });

    it('re-initializes when the server ends the session (HTTP 404) and retries the call once', async () => {
      await open(wb, 'keyed');
      const initializesBefore = httpProxy.requests.filter((r) => r.method === 'POST' && r.headers['mcp-session-id'] === undefined).length;
      httpProxy.expireSessions();
      const echo = await wb.useTool('keyed', 'keyed__streamable__echo', { message: 'after expiry' });
      assert.notEqual(echo.isError, true, textOf(echo));
      assert.match(textOf(echo), /after expiry/);
      const initializesAfter = httpProxy.requests.filter((r) => r.method === 'POST' && r.headers['mcp-session-id'] === undefined).length;
      assert.equal(initializesAfter, initializesBefore + 1, 'exactly one new session was initialized');
      const again = await wb.useTool('keyed', 'keyed__streamable__echo', { message: 'and later' });
      assert.match(textOf(again), /and later/);
      assert.ok(!wb.stderr().includes(secret));
    });

    it('re-initializes an sse server that ended the session (a message answered 404, as after a restart) and retries the call once', async () => {
      await open(wb, 'keyed');
      assert.match(textOf(await wb.useTool('keyed', 'keyed__legacy__echo', { message: 'before' })), /before/);
      const streamsBefore = sseProxy.requests.filter((r) => r.method === 'GET' && r.path === '/sse').length;
      sseProxy.expireSessions();
      const echo = await wb.useTool('keyed', 'keyed__legacy__echo', { message: 'after expiry' });
      assert.notEqual(echo.isError, true, textOf(echo));
      assert.match(textOf(echo), /after expiry/);
      const streamsAfter = sseProxy.requests.filter((r) => r.method === 'GET' && r.path === '/sse').length;
      assert.equal(streamsAfter, streamsBefore + 1, 'exactly one new session was opened');
      assert.match(textOf(await wb.useTool('keyed', 'keyed__legacy__echo', { message: 'and later' })), /and later/);
    });
  });
});
