import assert from 'node:assert/strict';
import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, type EraWorkbench } from '../helpers/era-workbench.js';
import { fixtureServer, tempDir } from '../helpers/workbench-process.js';

// A server whose last start timed out will most likely hang again (README "open_toolbox", the waits paragraph): a
// call by its full name waits for its next start only up to the toolbox's `openWaitMs`, not `useToolWaitMs`, and is
// told at once that it is starting again, how long its last start ran and how long ago, and what to do meanwhile. The
// server keeps starting in the background. A first start keeps the `useToolWaitMs` wait (npx downloads are slow).

/** The client gives up long before `useToolWaitMs`: a call that waits for it fails the test. */
const CLIENT_WAIT = { timeout: 30_000 };

interface ErrorMeta {
  code?: string;
  retryable?: boolean;
  server?: string;
  hint?: string;
  failure?: { kind?: string; timeoutMs?: number };
}
const errorOf = (result: CallToolResult): ErrorMeta => (result._meta?.['mcp-workbench/error'] ?? {}) as ErrorMeta;

/** A healthy server beside `stuck`; useToolWaitMs is far beyond the client's wait, the connect limit short. */
function hungConfig(stuck: Record<string, unknown>, openWaitMs = 300): unknown {
  return {
    openWaitMs,
    useToolWaitMs: 600_000,
    toolboxes: { mixed: { mcpServers: { healthy: fixtureServer('--name', 'healthy'), stuck: { ...stuck, connectTimeoutMs: 4_000 } } } },
    toolsets: { hung: { tools: ['mixed__stuck__*'] } },
  };
}

const call = (wb: EraWorkbench, tool: string, toolbox = 'mixed'): Promise<CallToolResult> =>
  wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: toolbox, tool_name: tool, arguments: { text: 'x' } } }, CLIENT_WAIT) as Promise<CallToolResult>;

/** The first start (no failure yet) waits for the server, which then times out its handshake: today's answer. */
async function firstStartTimesOut(wb: EraWorkbench): Promise<void> {
  const first = await call(wb, 'mixed__stuck__echo');
  assert.deepEqual([errorOf(first).code, errorOf(first).failure?.kind], ['CONNECT_TIMEOUT', 'handshake-timeout'], JSON.stringify(first));
}

/** The answer to a call while the server starts again after a timed-out start: at once, saying so, retryable. */
function assertStartingAgain(result: CallToolResult, server: string): void {
  const error = errorOf(result);
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.deepEqual([error.code, error.retryable, error.server], ['CONNECT_TIMEOUT', true, server], JSON.stringify(result));
  const text = JSON.stringify(result.content);
  assert.match(text, new RegExp(`server \\\\"${server}\\\\" of toolbox \\\\"mixed\\\\" is starting again`), text);
  assert.match(text, /its last start ran 4 s \(its connectTimeoutMs\) without completing the MCP handshake and was stopped \d+ s ago/, text);
  assert.match(text, /openWaitMs/, text);
  assert.match(error.hint ?? '', /other servers' tools meanwhile/);
  assert.match(error.hint ?? '', /call .* again later/);
  assert.match(error.hint ?? '', /tell the user to run `mcp-workbench doctor`/);
}

for (const era of ERAS) {
  describe(`a call by full name to a server whose last start timed out (stdio, ${era})`, () => {
    test('is answered by openWaitMs, saying it is starting again and how its last start ended, while it keeps starting', async () => {
      const wb = await startEra('stdio', era, hungConfig(fixtureServer('--never-initialize')));
      try {
        await firstStartTimesOut(wb);
        // Each later call would wait for the whole start (useToolWaitMs is 600 s, the connect limit 4 s): it is
        // answered before that start ends, every time, and the toolbox's other server still serves meanwhile.
        for (let i = 0; i < 2; i++) assertStartingAgain(await call(wb, 'mixed__stuck__echo'), 'stuck');
        // The same through a toolset that holds its tools: by full name (routed to the toolbox), and by a bare name,
        // which waits for the toolset's servers as for a toolbox's (README "Toolsets"): no list of the server is known,
        // so it is named as starting again, with how its last start ended, once openWaitMs has passed.
        assertStartingAgain(await call(wb, 'mixed__stuck__echo', 'hung'), 'stuck');
        const bare = await call(wb, 'echo', 'hung');
        assert.deepEqual([errorOf(bare).code, errorOf(bare).retryable, errorOf(bare).server], ['CONNECT_TIMEOUT', true, 'stuck'], JSON.stringify(bare));
        const text = JSON.stringify(bare.content);
        assert.match(text, /Server \\"stuck\\" is starting again \(\d+ s so far\) and may not answer: its last start failed \d+ s ago: .*did not complete the MCP handshake/, text);
        assert.match(errorOf(bare).hint ?? '', /tell the user to run `mcp-workbench doctor`/);
        assert.notEqual((await call(wb, 'mixed__healthy__echo')).isError, true);
      } finally {
        await wb.close();
      }
    });

    test('a server that was only slow once comes up on its next start and serves the call', async () => {
      const temp = await tempDir('wb-hung-once-');
      try {
        const hangFlag = join(temp.dir, 'hang-now');
        await writeFile(hangFlag, '');
        // openWaitMs leaves a healthy start ample time: the call waits for it and is served.
        const wb = await startEra('stdio', era, hungConfig(fixtureServer('--never-initialize-if', hangFlag), 20_000));
        try {
          await firstStartTimesOut(wb);
          await rm(hangFlag);
          const served = await call(wb, 'mixed__stuck__echo');
          assert.notEqual(served.isError, true, JSON.stringify(served));
        } finally {
          await wb.close();
        }
      } finally {
        await temp.cleanup();
      }
    });
  });
}

describe('a call by full name to a remote server whose last connect timed out (http, modern)', () => {
  test('is answered by openWaitMs, saying it is starting again', async () => {
    // Accepts connections and never answers a byte.
    const sockets = new Set<Socket>();
    const silent = createTcpServer((socket) => sockets.add(socket.on('error', () => {})));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
    const wb = await startEra('http', 'modern', hungConfig({ type: 'http', url }));
    try {
      await firstStartTimesOut(wb);
      assertStartingAgain(await call(wb, 'mixed__stuck__echo'), 'stuck');
    } finally {
      await wb.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
