import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { LOG_LEVEL_KEY, chatterCancelled, chatterOf, failuresIn, lateLogs, lateProgress, lateTicks, listen, useTool } from '../helpers/late-chatter.js';
import { fixtureEvents, node, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * Late messages from a downstream server of MCP 2026-07-28 (README "Downstream servers", "Relayed features",
 * "Log messages"): a modern server that goes on sending progress and log messages on the stream of a call the client
 * cancelled, or the workbench timed out, sends them about a call that is over. No progress with that call's token
 * reaches the client, a client of MCP 2026-07-28 gets no log message outside its calls, nothing fails in the
 * workbench, and the next call to that server is served. (test/server/late-messages.test.ts: the same with a
 * handshake-era server.)
 */

const MODERN = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));

const configOf = (log: string, timeoutMs: number) => ({ toolboxes: { t: { mcpServers: { fx: { command: node, args: [MODERN, '--chatter', log], timeoutMs } } } } });

/** An echo through the same server: everything the server sent before its answer has been handled by then. */
async function echoed(client: Client): Promise<void> {
  const result = (await client.callTool(useTool('echo', { text: 'next' }), { timeout: 60_000 })) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.deepEqual(result.content, [{ type: 'text', text: 'echo: next' }]);
}

/** What the server sent of each tick after it saw the cancel (what its SDK did not refuse). */
async function sentLate(log: string): Promise<unknown[]> {
  return (await fixtureEvents(log)).filter((e) => e.event === 'chatter' && e.late === true).map((e) => e.sent);
}

async function cancelledCall(over: Over, era: EraName): Promise<void> {
  const temp = await tempDir('wb-late-modern-');
  const log = join(temp.dir, 'fx.log');
  const wb = await startEra(over, era, configOf(log, 600_000));
  try {
    const heard = listen(wb.client);
    await chatterCancelled(wb.client, { ms: 2500 });
    const before = heard.messages.length;
    await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'cancelled'), { timeoutMs: 30_000, what: 'the cancel to reach the server' });
    await lateTicks(log, 5);
    await echoed(wb.client);
    assert.ok((await sentLate(log)).some((sent) => Array.isArray(sent) && sent.includes('progress')), 'the server did send progress after the cancel');
    const after = chatterOf(heard.messages.slice(before));
    assert.deepEqual(await lateProgress(heard.messages, log), [], `no progress the server sent after the cancel reaches the client (sent: ${JSON.stringify(await sentLate(log))})`);
    // A log message the server sent before it saw the cancel may be on its way as the client cancels: not late.
    if (era === 'modern') assert.deepEqual(await lateLogs(after.logs, log), [], 'a modern client is sent no log message the server sent after the cancel');
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await wb.close();
    await temp.cleanup();
  }
}

async function timedOutCall(over: Over, era: EraName): Promise<void> {
  const temp = await tempDir('wb-late-modern-');
  const log = join(temp.dir, 'fx.log');
  const wb = await startEra(over, era, configOf(log, 1000));
  try {
    const heard = listen(wb.client);
    let ticks = 0;
    const result = (await wb.client.callTool(useTool('chatter', { ms: 2500, progress: 'late' }, { [LOG_LEVEL_KEY]: 'info' }), { timeout: 120_000, onprogress: () => void ticks++ })) as CallToolResult;
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.equal((result._meta?.['mcp-workbench/error'] as { code?: string } | undefined)?.code, 'CALL_TIMEOUT', JSON.stringify(result));
    const before = heard.messages.length;
    await lateTicks(log, 5);
    await echoed(wb.client);
    assert.ok((await sentLate(log)).some((sent) => Array.isArray(sent) && sent.includes('progress')), 'the server did send progress after the cancel');
    const after = chatterOf(heard.messages.slice(before));
    assert.deepEqual(after.progress, [], `no progress of the timed-out call reaches the client (sent: ${JSON.stringify(await sentLate(log))})`);
    assert.equal(ticks, 0);
    if (era === 'modern') assert.deepEqual(after.logs, [], 'a modern client is sent no log message outside its calls');
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await wb.close();
    await temp.cleanup();
  }
}

// A legacy client over stdio only: late progress is dropped in the downstream call channel, whatever the front, and a
// legacy client may be sent log messages at any time. A modern client over both: the stdio front and the HTTP front
// each decide which log messages belong to one of its calls.
const CASES: [Over, EraName][] = [['stdio', 'legacy'], ['stdio', 'modern'], ['http', 'modern']];
for (const [over, era] of CASES) {
  describe(`late messages from a modern server, ${era} client over ${over}`, () => {
    it('a cancelled call: the server goes on talking, nothing of it reaches the client, the next call is served', () => cancelledCall(over, era));
    it('a timed-out call: the server goes on talking, nothing of it reaches the client, the next call is served', () => timedOutCall(over, era));
  });
}
