import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { ERAS, startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { LOG_LEVEL_KEY, chatterCancelled, chatterOf, failuresIn, lateLogs, lateProgress, lateTicks, listen, useTool } from '../helpers/late-chatter.js';
import { fixtureEvents, fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * What reaches a client after the call it belongs to has ended (README "Downstream servers", "Relayed features";
 * "Serving over HTTP", "Log messages"): a server that keeps sending progress and log messages about a call the client
 * cancelled, or the workbench timed out, sends them about a call that is over. No progress with that call's token may
 * reach the client, a client of MCP 2026-07-28 (reached only during its calls) gets no log message, nothing fails in
 * the workbench, and the next call to that server is served.
 */


/** An echo through the same server: everything the server sent before its answer has been handled by then. */
async function echoed(client: Client): Promise<void> {
  const result = (await client.callTool(useTool('echo', { text: 'next' }), { timeout: 60_000 })) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.deepEqual(result.content, [{ type: 'text', text: 'next' }]);
}

async function cancelledCall(over: Over, era: EraName): Promise<void> {
  const temp = await tempDir('wb-late-');
  const log = join(temp.dir, 'fx.log');
  const config = { toolboxes: { t: { mcpServers: { fx: { ...fixtureServer('--odd', '--log', log), timeoutMs: 600_000 } } } } };
  const wb = await startEra(over, era, config);
  try {
    const heard = listen(wb.client);
    await chatterCancelled(wb.client, { ms: 2500 });
    const before = heard.messages.length;
    await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'cancelled' || (e.event === 'chatter' && e.late === true)), { timeoutMs: 30_000, what: 'the cancel to reach the server' });
    await lateTicks(log, 5);
    await echoed(wb.client);
    const after = chatterOf(heard.messages.slice(before));
    assert.deepEqual(await lateProgress(heard.messages, log), [], 'no progress the server sent after the cancel reaches the client');
    // A log message the server sent before it saw the cancel may be on its way as the client cancels: not late.
    if (era === 'modern') assert.deepEqual(await lateLogs(after.logs, log), [], 'a modern client is sent no log message the server sent after the cancel');
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await wb.close();
    await temp.cleanup();
  }
}

async function timedOutCall(over: Over, era: EraName): Promise<void> {
  const temp = await tempDir('wb-late-');
  const log = join(temp.dir, 'fx.log');
  const config = { toolboxes: { t: { mcpServers: { fx: { ...fixtureServer('--odd', '--log', log), timeoutMs: 1000 } } } } };
  const wb = await startEra(over, era, config);
  try {
    const heard = listen(wb.client);
    let ticks = 0;
    const result = (await wb.client.callTool(useTool('chatter', { ms: 2500, progress: 'late' }, { [LOG_LEVEL_KEY]: 'info' }), { timeout: 120_000, onprogress: () => void ticks++ })) as CallToolResult;
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.equal((result._meta?.['mcp-workbench/error'] as { code?: string } | undefined)?.code, 'CALL_TIMEOUT', JSON.stringify(result));
    const before = heard.messages.length;
    await lateTicks(log, 5);
    await echoed(wb.client);
    const after = chatterOf(heard.messages.slice(before));
    assert.deepEqual(after.progress, [], 'no progress of the timed-out call reaches the client');
    assert.equal(ticks, 0);
    if (era === 'modern') assert.deepEqual(after.logs, [], 'a modern client is sent no log message outside its calls');
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await wb.close();
    await temp.cleanup();
  }
}

for (const over of ['stdio', 'http'] as const) {
  for (const era of ERAS) {
    describe(`late messages, ${era} client over ${over}`, () => {
      it('a cancelled call: the server goes on talking, nothing of it reaches the client, the next call is served', () => cancelledCall(over, era));
      it('a timed-out call: the server goes on talking, nothing of it reaches the client, the next call is served', () => timedOutCall(over, era));
    });
  }
}
