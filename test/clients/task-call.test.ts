import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult, Client, Progress } from '@modelcontextprotocol/client';
import { ERAS, startEra, type Over } from '../helpers/era-workbench.js';
import { everythingServer, fixtureEvents, fixtureServer, tempDir } from '../helpers/workbench-process.js';

// Task-only tools (execution.taskSupport "required", MCP 2025-11-25 tasks) through a plain use_tool (README "Task-only
// tools"): the workbench creates the task downstream, relays its status as progress, and returns the final result;
// a cancel or a timeout cancels the task on the server.

function useTool(client: Client, toolbox: string, tool: string, args: Record<string, unknown>, options: { onprogress?: (p: Progress) => void; signal?: AbortSignal } = {}): Promise<CallToolResult> {
  const params = { name: 'use_tool', arguments: { toolbox_name: toolbox, tool_name: tool, arguments: args } };
  return client.callTool(params, options as never) as Promise<CallToolResult>;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

describe("server-everything's simulate-research-query, a task-only tool", () => {
  for (const over of ['stdio', 'http'] as const satisfies readonly Over[]) {
    for (const era of ERAS) {
      test(`completes through use_tool with its progress seen by a ${era} client over ${over}`, async () => {
        const wb = await startEra(over, era, { toolboxes: { demo: { mcpServers: { everything: everythingServer() } } } });
        try {
          const progress: Progress[] = [];
          const result = await useTool(wb.client, 'demo', 'simulate-research-query', { topic: 'tides' }, { onprogress: (p) => void progress.push(p) });
          assert.notEqual(result.isError, true, text(result));
          assert.match(text(result), /^# Research Report: tides\n/);
          assert.match(text(result), /Stage 4: Generating report/);
          const messages = progress.map((p) => p.message);
          assert.ok(messages.includes('working: Gathering sources...'), JSON.stringify(messages));
          // The workbench writes the final status ("completed…") before the result, but the SDK client hands
          // notifications to their handlers a microtask later while it settles a response at once, dropping the
          // request's progress handler: when both arrive in one read (a loaded machine), the client never sees that
          // last progress. So the test asks only that no status comes after it, not that it is seen.
          const completed = messages.findIndex((m) => m?.startsWith('completed'));
          assert.ok(completed === -1 || completed === messages.length - 1, JSON.stringify(messages));
          assert.deepEqual(
            progress.map((p) => p.progress),
            progress.map((_, i) => i + 1),
            'progress only increases',
          );
        } finally {
          await wb.close();
        }
      });
    }
  }

  test('asks the client for input during the task and uses its answer (a form schema reaches the client untouched)', async () => {
    let asked: Record<string, unknown> | undefined;
    const wb = await startEra(
      'stdio',
      'legacy',
      { toolboxes: { demo: { mcpServers: { everything: everythingServer() } } } },
      (client) =>
        client.setRequestHandler('elicitation/create', async (request) => {
          asked = request.params as Record<string, unknown>;
          return { action: 'accept', content: { interpretation: 'snake' } };
        }),
      { elicitation: { form: {} } },
    );
    try {
      const result = await useTool(wb.client, 'demo', 'simulate-research-query', { topic: 'python', ambiguous: true });
      assert.match(text(result), /^# Research Report: python \(snake\)/);
      const schema = asked?.requestedSchema as { properties: { interpretation: { title: string; oneOf: unknown[] } } };
      assert.equal(schema.properties.interpretation.title, 'Clarification');
      assert.deepEqual(schema.properties.interpretation.oneOf[1], { const: 'snake', title: 'Python snake species' });
    } finally {
      await wb.close();
    }
  });
});

describe('fault modes of task-only tools', () => {
  test('a task that finishes after some steps; one cancelled by the client; one that never finishes times out', async () => {
    const logs = await tempDir();
    const log = join(logs.dir, 'tasks.jsonl');
    const config = {
      toolboxes: {
        lab: { mcpServers: { tasks: { ...fixtureServer('--tasks', '--log', log), timeoutMs: 1_500 } } },
      },
    };
    const wb = await startEra('stdio', 'legacy', config);
    try {
      const progress: Progress[] = [];
      const done = await useTool(wb.client, 'lab', 'research', { steps: 3 }, { onprogress: (p) => void progress.push(p) });
      assert.equal(text(done), 'researched');
      assert.deepEqual(done.structuredContent, { steps: 3 });
      // The final "completed" status may be lost by the SDK client when it arrives with the result (see above).
      const seen = progress.map((p) => p.message);
      assert.deepEqual(seen.at(-1) === 'completed: step 3/3' ? seen.slice(0, -1) : seen, ['working', 'working: step 1/3', 'working: step 2/3', 'working: step 3/3']);

      // Cancelled mid-task by the client: the task is cancelled on the server.
      const abort = new AbortController();
      const cancelled = useTool(wb.client, 'lab', 'never_finishes', {}, { signal: abort.signal, onprogress: () => abort.abort('enough') });
      await assert.rejects(cancelled);
      assert.ok(
        await waitForEvent(log, (e) => e.event === 'task_cancelled' && e.taskId === 'task-1'),
        'the first never_finishes task was cancelled downstream',
      );

      // No progress for longer than the server's timeoutMs: the call ends with a timeout and the task is cancelled.
      const stuck = await useTool(wb.client, 'lab', 'never_finishes', {});
      assert.equal(stuck.isError, true);
      assert.match(text(stuck), /task task-2 made no progress for 1500 ms.*"timeoutMs"/s);
      assert.ok(await waitForEvent(log, (e) => e.event === 'task_cancelled' && e.taskId === 'task-2'));
    } finally {
      await wb.close();
      await logs.cleanup();
    }
  });
});

describe('a task-only tool whose server is killed mid-task', () => {
  for (const [over, era] of [['stdio', 'legacy'], ['http', 'modern']] as const) {
    test(`fails as any call whose server stopped: SERVER_EXITED, retryable, with its signal (${over}, ${era} client)`, async () => {
      const wb = await startEra(over, era, { toolboxes: { lab: { mcpServers: { t: fixtureServer('--tasks') } } } });
      try {
        const pid = Number(text(await useTool(wb.client, 'lab', 'pid', {})));
        assert.ok(pid > 0);
        let working!: () => void;
        const started = new Promise<void>((resolve) => (working = resolve));
        const call = useTool(wb.client, 'lab', 'never_finishes', {}, { onprogress: () => working() });
        await started;
        process.kill(pid, 'SIGKILL');
        const result = await call;
        assert.equal(result.isError, true, text(result));
        const error = (result._meta as Record<string, { code?: string; retryable?: boolean; failure?: { signal?: string } }>)['mcp-workbench/error'];
        assert.equal(error?.code, 'SERVER_EXITED', text(result));
        assert.equal(error?.retryable, true);
        assert.equal(error?.failure?.signal, 'SIGKILL');
        assert.equal(text(await useTool(wb.client, 'lab', 'echo', { text: 'again' })), 'again', 'restarted on the next call');
      } finally {
        await wb.close();
      }
    });
  }
});

describe('tools with taskSupport "optional" (README "Task-only tools")', () => {
  test('go the task path when the server\'s timeoutMs is above 120 s and the client gave a progress token; else a plain call', async () => {
    const logs = await tempDir();
    const slowLog = join(logs.dir, 'slow.jsonl');
    const quickLog = join(logs.dir, 'quick.jsonl');
    const config = {
      toolboxes: {
        slow: { mcpServers: { tasks: { ...fixtureServer('--tasks', '--log', slowLog), timeoutMs: 600_000 } } },
        quick: { mcpServers: { tasks: fixtureServer('--tasks', '--log', quickLog) } },
      },
    };
    const wb = await startEra('stdio', 'legacy', config);
    try {
      const progress: Progress[] = [];
      const asTask = await useTool(wb.client, 'slow', 'maybe_task', { steps: 2 }, { onprogress: (p) => void progress.push(p) });
      assert.equal(text(asTask), 'researched', 'the task\'s result, unchanged');
      assert.ok(progress.some((p) => p.message === 'working: step 1/2'), JSON.stringify(progress));
      assert.deepEqual((await fixtureEvents(slowLog)).filter((e) => e.event === 'task_created').map((e) => e.tool), ['maybe_task']);

      // No progress token: nothing could keep the client waiting, so a plain call.
      assert.equal(text(await useTool(wb.client, 'slow', 'maybe_task', {})), 'answered without a task');
      // The default timeoutMs (120 s): a plain call, progress token or not.
      assert.equal(text(await useTool(wb.client, 'quick', 'maybe_task', {}, { onprogress: () => {} })), 'answered without a task');
      assert.deepEqual((await fixtureEvents(quickLog)).filter((e) => e.event === 'task_created'), []);
      assert.equal((await fixtureEvents(slowLog)).filter((e) => e.event === 'plain_call').length, 1);
    } finally {
      await wb.close();
      await logs.cleanup();
    }
  });
});

async function waitForEvent(file: string, match: (event: { event: string; [key: string]: unknown }) => boolean): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if ((await fixtureEvents(file)).some(match)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
