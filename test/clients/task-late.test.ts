import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { chatterOf, failuresIn, listen, paramsOf } from '../helpers/late-chatter.js';
import { fixtureEvents, fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * A task-only tool's call that ends early (README "Task-only tools"): cancelled by the client, or timed out by the
 * workbench. Its task is cancelled on the server (tasks/cancel), polling stops — no tasks/get for it after the
 * cancel — no progress about a status polled after the cancel reaches the client, nothing fails in the workbench, and
 * the next task call to that server completes.
 */

type Events = Awaited<ReturnType<typeof fixtureEvents>>;

const useTool = (tool: string, args: Record<string, unknown>) => ({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: tool, arguments: args } });

/** The tasks/get polls of `taskId` the server logged after it logged the task's cancel. */
function pollsAfterCancel(events: Events, taskId: string): Events {
  const cancelled = events.findIndex((e) => e.event === 'task_cancelled' && e.taskId === taskId);
  return cancelled === -1 ? [] : events.slice(cancelled + 1).filter((e) => e.event === 'task_polled' && e.taskId === taskId);
}

/** A task call that completes; its many polls are what the cancelled task's polling would have shown up among. */
async function nextTaskCompletes(client: Client): Promise<void> {
  const result = (await client.callTool(useTool('research', { steps: 8 }), { timeout: 120_000, onprogress: () => {} })) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.deepEqual(result.content, [{ type: 'text', text: 'researched' }]);
}

async function cancelledTask(over: Over, era: EraName): Promise<void> {
  const temp = await tempDir('wb-task-late-');
  const log = join(temp.dir, 'tasks.log');
  const wb = await startEra(over, era, { toolboxes: { lab: { mcpServers: { tasks: { ...fixtureServer('--tasks', '--log', log), timeoutMs: 600_000 } } } } });
  try {
    const heard = listen(wb.client);
    const abort = new AbortController();
    let ticks = 0;
    // A task whose status moves on every poll: each poll is relayed as progress.
    const call = wb.client.callTool(useTool('research', { steps: 100_000 }), { signal: abort.signal, timeout: 120_000, onprogress: () => void ticks++ });
    const settled = call.then(
      () => 'answered',
      () => 'rejected',
    );
    await waitFor(() => ticks >= 3, { timeoutMs: 30_000, what: 'progress of the task' });
    abort.abort('the user cancelled it');
    assert.equal(await settled, 'rejected');
    await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'task_cancelled' && e.taskId === 'task-0'), { timeoutMs: 30_000, what: 'tasks/cancel for task-0' });
    await nextTaskCompletes(wb.client);
    const events = await fixtureEvents(log);
    assert.deepEqual(pollsAfterCancel(events, 'task-0'), [], 'no tasks/get for the cancelled task after its cancel');
    const polled = events.filter((e) => e.event === 'task_polled' && e.taskId === 'task-0').map((e) => Number(e.step));
    const last = Math.max(...polled);
    const steps = chatterOf(heard.messages).progress.map((m) => /^working: step (\d+)\/100000$/.exec(String(paramsOf(m).message))?.[1]).filter((s) => s !== undefined).map(Number);
    assert.ok(steps.every((s) => s <= last), `no progress about a status polled after the cancel reaches the client (polled up to ${last}, relayed ${steps.join(', ')})`);
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await wb.close();
    await temp.cleanup();
  }
}

async function timedOutTask(over: Over, era: EraName): Promise<void> {
  const temp = await tempDir('wb-task-late-');
  const log = join(temp.dir, 'tasks.log');
  const wb = await startEra(over, era, { toolboxes: { lab: { mcpServers: { tasks: { ...fixtureServer('--tasks', '--log', log), timeoutMs: 1000 } } } } });
  try {
    const heard = listen(wb.client);
    const result = (await wb.client.callTool(useTool('never_finishes', {}), { timeout: 120_000, onprogress: () => {} })) as CallToolResult;
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.equal((result._meta?.['mcp-workbench/error'] as { code?: string } | undefined)?.code, 'CALL_TIMEOUT', JSON.stringify(result));
    const before = heard.messages.length;
    await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'task_cancelled' && e.taskId === 'task-0'), { timeoutMs: 30_000, what: 'tasks/cancel for task-0' });
    await nextTaskCompletes(wb.client);
    assert.deepEqual(pollsAfterCancel(await fixtureEvents(log), 'task-0'), [], 'no tasks/get for the timed-out task after its cancel');
    const token = (m: unknown): unknown => paramsOf(m as never).progressToken;
    const first = chatterOf(heard.messages.slice(0, before)).progress.map(token);
    const late = chatterOf(heard.messages.slice(before)).progress.filter((m) => first.includes(token(m)));
    assert.deepEqual(late, [], 'no progress of the timed-out call reaches the client after its answer');
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await wb.close();
    await temp.cleanup();
  }
}

/**
 * Cancelled, or timed out, while the call that creates the task is still unanswered (the server made the task, its
 * answer is on the way): the task id comes with that answer, and the task is cancelled once it does — not left
 * running on the server until its ttl.
 */
async function endedWhileCreating(over: Over, era: EraName, how: 'cancelled' | 'timed out'): Promise<void> {
  const temp = await tempDir('wb-task-late-');
  const log = join(temp.dir, 'tasks.log');
  const timeoutMs = how === 'timed out' ? 1000 : 600_000;
  const wb = await startEra(over, era, { toolboxes: { lab: { mcpServers: { tasks: { ...fixtureServer('--tasks', '--log', log), timeoutMs } } } } });
  try {
    const abort = new AbortController();
    const call = wb.client.callTool(useTool('slow_start', { ms: 4_000 }), { signal: abort.signal, timeout: 120_000, onprogress: () => {} });
    const settled = call.then(
      (result) => `answered ${JSON.stringify(result)}`,
      () => 'rejected',
    );
    await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'task_created' && e.taskId === 'task-0'), { timeoutMs: 60_000, what: 'task-0 created' });
    if (how === 'cancelled') {
      abort.abort('the user cancelled it');
      assert.equal(await settled, 'rejected');
    } else {
      assert.match(await settled, /CALL_TIMEOUT/);
    }
    await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'task_cancelled' && e.taskId === 'task-0'), { timeoutMs: 60_000, what: 'tasks/cancel for task-0, once its creating call was answered' });
    await nextTaskCompletes(wb.client);
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await wb.close();
    await temp.cleanup();
  }
}

// The task path runs downstream of the front, the same for every client; how a cancel reaches it is the front's: a
// cancelled call on every front and era, a timed-out one on one front per era.
for (const [over, era] of [['stdio', 'legacy'], ['stdio', 'modern'], ['http', 'legacy'], ['http', 'modern']] as const) {
  describe(`a task call that ends early, ${era} client over ${over}`, () => {
    it('cancelled by the client: its task is cancelled, polling stops, no late progress, the next task call completes', () => cancelledTask(over, era));
    if ((over === 'stdio') === (era === 'legacy')) {
      it('timed out: its task is cancelled, polling stops, no late progress, the next task call completes', () => timedOutTask(over, era));
    }
    it('cancelled while the task is being created: the task is cancelled once its id is known', () => endedWhileCreating(over, era, 'cancelled'));
    if (over === 'stdio' && era === 'legacy') {
      it('timed out while the task is being created: the task is cancelled once its id is known', () => endedWhileCreating(over, era, 'timed out'));
    }
  });
}
