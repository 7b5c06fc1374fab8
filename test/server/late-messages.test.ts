import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { ERAS, startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { LOG_LEVEL_KEY, chatterCancelled, chatterOf, failuresIn, lateLogs, lateProgress, lateTicks, listen, useTool } from '../helpers/late-chatter.js';
import { fixtureEvents, fixtureServer, node, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * What reaches a client after the call it belongs to has ended (README "Downstream servers", "Relayed features";
 * "Serving over HTTP", "Log messages"): a server that keeps sending progress and log messages about a call the client
 * cancelled, or the workbench timed out, sends them about a call that is over. No progress with that call's token may
 * reach the client, a client of MCP 2026-07-28 (reached only during its calls) gets no log message, nothing fails in
 * the workbench, and the next call to that server is served. The same cases run against a handshake-era server and a
 * server of MCP 2026-07-28 (which sends its late messages on the stream of the ended call).
 */

/** A downstream server that chatters after a call ended, as the cases need it. */
interface Chatterer {
  name: string;
  config(log: string, timeoutMs: number): object;
  /** What the server's echo tool answers to "next". */
  echoed: string;
  /** The server logs `cancelled` on seeing the cancel; a handshake-era one may only show ticks marked late. */
  sawCancel(event: Record<string, unknown>): boolean;
  /** Whether the fixture logs what it sent of each late tick (`sent`), to show it did send progress. */
  logsSent: boolean;
  cases: readonly [Over, EraName][];
}

const MODERN = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const server = (fx: object, timeoutMs: number) => ({ toolboxes: { t: { mcpServers: { fx: { ...fx, timeoutMs } } } } });

const CHATTERERS: Chatterer[] = [
  {
    name: 'a handshake-era server',
    config: (log, timeoutMs) => server(fixtureServer('--odd', '--log', log), timeoutMs),
    echoed: 'next',
    sawCancel: (e) => e.event === 'cancelled' || (e.event === 'chatter' && e.late === true),
    logsSent: false,
    cases: (['stdio', 'http'] as const).flatMap((over) => ERAS.map((era): [Over, EraName] => [over, era])),
  },
  {
    name: 'a modern server',
    config: (log, timeoutMs) => server({ command: node, args: [MODERN, '--chatter', log] }, timeoutMs),
    echoed: 'echo: next',
    sawCancel: (e) => e.event === 'cancelled',
    logsSent: true,
    // A legacy client over stdio only: late progress is dropped in the downstream call channel, whatever the front,
    // and a legacy client may be sent log messages at any time. A modern client over both: the stdio front and the
    // HTTP front each decide which log messages belong to one of its calls.
    cases: [['stdio', 'legacy'], ['stdio', 'modern'], ['http', 'modern']],
  },
];

/** An echo through the same server: everything the server sent before its answer has been handled by then. */
async function echoed(client: Client, fx: Chatterer): Promise<void> {
  const result = (await client.callTool(useTool('echo', { text: 'next' }), { timeout: 60_000 })) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.deepEqual(result.content, [{ type: 'text', text: fx.echoed }]);
}

/** What the server sent of each tick after it saw the cancel (what its SDK did not refuse), when it logs that. */
async function sentLate(log: string): Promise<unknown[]> {
  return (await fixtureEvents(log)).filter((e) => e.event === 'chatter' && e.late === true).map((e) => e.sent);
}

async function assertSentProgress(fx: Chatterer, log: string): Promise<void> {
  if (fx.logsSent) assert.ok((await sentLate(log)).some((sent) => Array.isArray(sent) && sent.includes('progress')), 'the server did send progress after the cancel');
}

async function cancelledCall(fx: Chatterer, over: Over, era: EraName): Promise<void> {
  const temp = await tempDir('wb-late-');
  const log = join(temp.dir, 'fx.log');
  const wb = await startEra(over, era, fx.config(log, 600_000));
  try {
    const heard = listen(wb.client);
    await chatterCancelled(wb.client, { ms: 2500 });
    const before = heard.messages.length;
    await waitFor(async () => (await fixtureEvents(log)).some(fx.sawCancel), { timeoutMs: 30_000, what: 'the cancel to reach the server' });
    await lateTicks(log, 5);
    await echoed(wb.client, fx);
    await assertSentProgress(fx, log);
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

async function timedOutCall(fx: Chatterer, over: Over, era: EraName): Promise<void> {
  const temp = await tempDir('wb-late-');
  const log = join(temp.dir, 'fx.log');
  const wb = await startEra(over, era, fx.config(log, 1000));
  try {
    const heard = listen(wb.client);
    let ticks = 0;
    const result = (await wb.client.callTool(useTool('chatter', { ms: 2500, progress: 'late' }, { [LOG_LEVEL_KEY]: 'info' }), { timeout: 120_000, onprogress: () => void ticks++ })) as CallToolResult;
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.equal((result._meta?.['mcp-workbench/error'] as { code?: string } | undefined)?.code, 'CALL_TIMEOUT', JSON.stringify(result));
    const before = heard.messages.length;
    await lateTicks(log, 5);
    await echoed(wb.client, fx);
    await assertSentProgress(fx, log);
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

for (const fx of CHATTERERS) {
  for (const [over, era] of fx.cases) {
    describe(`late messages from ${fx.name}, ${era} client over ${over}`, () => {
      it('a cancelled call: the server goes on talking, nothing of it reaches the client, the next call is served', () => cancelledCall(fx, over, era));
      it('a timed-out call: the server goes on talking, nothing of it reaches the client, the next call is served', () => timedOutCall(fx, over, era));
    });
  }
}
