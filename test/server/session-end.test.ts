import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ERAS, eraClient, startEra } from '../helpers/era-workbench.js';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureEvents, fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * A handshake-era HTTP session that ends — the client closes it (DELETE), or the workbench shuts down — ends its
 * calls in flight (README "Serving over HTTP"): each is cancelled on the downstream server, which matters most on a
 * `shared` server that outlives the session, and a session still there to hear it gets a SHUTTING_DOWN tool result.
 */

const hang = { name: 'use_tool', arguments: { toolbox_name: 't', tool_name: 't__shared__hang', arguments: {} } };
/** Far beyond the test's own waits: a call that is not ended by its session's end would still be running. */
const CALL_LIMIT = { timeout: 120_000 };

/** A workbench over HTTP whose one server is shared and logs what it is asked (and told) to `log`. */
async function startWithSharedServer(): Promise<{ temp: { dir: string; cleanup: () => Promise<void> }; log: string; wb: HttpWorkbench }> {
  const temp = await tempDir('wb-session-end-');
  const log = join(temp.dir, 'shared.log');
  const wb = await startHttpWorkbench({ toolboxes: { t: { mcpServers: { shared: { ...fixtureServer('--log', log), shared: true, timeoutMs: 600_000 } } } } }, ['--http', '0']);
  return { temp, log, wb };
}

/** Once `call` reached the server, stops the workbench: the call is answered SHUTTING_DOWN and cancelled downstream. */
async function answeredAtShutdown(call: Promise<unknown>, log: string, wb: HttpWorkbench): Promise<void> {
  const answer = call.then((r) => r as CallToolResult, (error: unknown) => error);
  assert.ok(await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'call' && e.tool === 'hang'), 15_000), 'the call reached the server');
  await wb.stop();
  const result = await answer;
  assert.ok(!(result instanceof Error), `answered, not ${String(result)}`);
  const called = result as CallToolResult;
  assert.equal(called.isError, true, JSON.stringify(called));
  assert.equal((called._meta?.['mcp-workbench/error'] as { code?: string } | undefined)?.code, 'SHUTTING_DOWN', JSON.stringify(called));
  assert.ok((await fixtureEvents(log)).some((e) => e.event === 'cancelled' && e.tool === 'hang'), 'the call was cancelled downstream');
}

describe('a handshake-era HTTP session that ends', () => {
  it('closed by its client: its call on a shared server is cancelled downstream; the other session is unaffected', async () => {
    const { temp, log, wb } = await startWithSharedServer();
    try {
      const a = await wb.connect();
      const b = await wb.connect();
      void a.client.callTool(hang, undefined, CALL_LIMIT).catch(() => {});
      assert.ok(await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'call' && e.tool === 'hang'), 15_000), 'the call reached the server');
      await a.close();
      assert.ok(await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'cancelled' && e.tool === 'hang'), 15_000), 'the call was cancelled downstream');
      const echoed = (await b.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 't', tool_name: 't__shared__echo', arguments: { text: 'b is served' } } })) as CallToolResult;
      assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
      await b.close();
    } finally {
      await wb.stop();
      await temp.cleanup();
    }
  });

  it('at shutdown: a call in flight on a shared server is answered SHUTTING_DOWN as a tool result, and cancelled downstream', async () => {
    const { temp, log, wb } = await startWithSharedServer();
    try {
      const a = await wb.connect();
      await answeredAtShutdown(a.client.callTool(hang, undefined, CALL_LIMIT), log, wb);
    } finally {
      await wb.stop();
      await temp.cleanup();
    }
  });
});

describe('an MCP 2026-07-28 HTTP client at shutdown', () => {
  it('its call in flight on a shared server is answered SHUTTING_DOWN as a tool result, and cancelled downstream', async () => {
    const { temp, log, wb } = await startWithSharedServer();
    const client = eraClient('modern');
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
      await answeredAtShutdown(client.callTool(hang, { timeout: CALL_LIMIT.timeout }), log, wb);
    } finally {
      await client.close().catch(() => {});
      await wb.stop();
      await temp.cleanup();
    }
  });
});

describe('a stdio client at shutdown', () => {
  // A modern client's very first request is answered by the MCP server (the pipeline takes a request once the SDK has
  // accepted its envelope): it must be answered the same way.
  const cases = [...ERAS.map((era) => ({ era, first: false })), { era: 'modern' as const, first: true }];
  for (const { era, first } of cases) {
    it(`${era}${first ? ', as its first request' : ''}: its call in flight is answered SHUTTING_DOWN as a tool result (not as a server that exited), and cancelled downstream`, async () => {
      const temp = await tempDir('wb-session-end-');
      const log = join(temp.dir, 'server.log');
      const wb = await startEra('stdio', era, { toolboxes: { t: { mcpServers: { shared: { ...fixtureServer('--log', log), timeoutMs: 600_000 } } } } });
      try {
        if (!first) await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 't' } });
        const answer = wb.client.callTool(hang, { timeout: CALL_LIMIT.timeout }).then((r) => r as CallToolResult, (error: unknown) => error);
        assert.ok(await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'call' && e.tool === 'hang'), 15_000), 'the call reached the server');
        process.kill(wb.pid, 'SIGTERM');
        const result = await answer;
        assert.ok(!(result instanceof Error), `answered, not ${String(result)}`);
        const called = result as CallToolResult;
        assert.equal(called.isError, true, JSON.stringify(called));
        assert.equal((called._meta?.['mcp-workbench/error'] as { code?: string } | undefined)?.code, 'SHUTTING_DOWN', JSON.stringify(called));
        assert.ok(await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'exit'), 10_000), 'the server was ended');
        assert.ok((await fixtureEvents(log)).some((e) => e.event === 'cancelled' && e.tool === 'hang'), 'the call was cancelled downstream');
      } finally {
        await wb.close();
        await temp.cleanup();
      }
    });
  }
});
