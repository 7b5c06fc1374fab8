import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import { everythingServer, fixtureEvents, fixtureServer, startWorkbench, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

describe('progress and cancellation', () => {
  it('carries progress from the downstream call to the client under the client\'s own token, never mixed', async () => {
    const wb = await startWorkbench({ toolboxes: { demo: { mcpServers: { everything: everythingServer() } } } });
    try {
      const seen: Record<string, Progress[]> = { a: [], b: [] };
      const call = (key: 'a' | 'b', steps: number) =>
        wb.client.callTool(
          {
            name: 'use_tool',
            arguments: { toolbox_name: 'demo', tool_name: 'demo__everything__trigger-long-running-operation', arguments: { duration: 1, steps } },
          },
          undefined,
          { onprogress: (p) => seen[key]!.push(p) },
        );
      const [a, b] = await Promise.all([call('a', 3), call('b', 5)]);
      assert.notEqual(a.isError, true);
      assert.notEqual(b.isError, true);
      // The final notification can race the result (it is sent just before it); all earlier ones must arrive.
      assert.ok(seen.a!.length >= 2 && seen.a!.length <= 3, `call a saw ${seen.a!.length} progress notifications`);
      assert.ok(seen.b!.length >= 4 && seen.b!.length <= 5, `call b saw ${seen.b!.length} progress notifications`);
      assert.ok(seen.a!.every((p) => p.total === 3), 'a only sees its own progress');
      assert.ok(seen.b!.every((p) => p.total === 5), 'b only sees its own progress');
    } finally {
      await wb.close();
    }
  });

  it('lets progress reset the call timeout, while a silent call of the same length times out', async () => {
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { fx: { ...fixtureServer(), timeoutMs: 700 } } } } });
    try {
      const args = { toolbox_name: 'tb', tool_name: 'tb__fx__slow', arguments: { ms: 2000, steps: 10 } };
      const steps: Progress[] = [];
      const withProgress = (await wb.client.callTool({ name: 'use_tool', arguments: args }, undefined, { onprogress: (p) => steps.push(p) })) as CallToolResult;
      assert.equal(textOf(withProgress), 'done after 10 steps', 'progress every 200 ms kept a 700 ms timeout from firing');
      assert.ok(steps.length >= 9);
      const silent = (await wb.client.callTool({ name: 'use_tool', arguments: args })) as CallToolResult;
      assert.equal(workbenchErrorCode(silent), 'CALL_TIMEOUT');
      assert.match(textOf(silent), /within 700 ms/);
    } finally {
      await wb.close();
    }
  });

  it('cancels the downstream request when the client cancels use_tool', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const log = join(dir, 'fixture.log');
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { fx: fixtureServer('--log', log) } } } });
    try {
      await wb.call('open_toolbox', { toolbox_name: 'tb' });
      const controller = new AbortController();
      const pending = wb.client.callTool(
        { name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'tb__fx__hang', arguments: {} } },
        undefined,
        { signal: controller.signal },
      );
      assert.ok(await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'call' && e.tool === 'hang'), 5000));
      controller.abort('user pressed stop');
      await assert.rejects(pending);
      assert.ok(
        await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'cancelled' && e.tool === 'hang'), 5000),
        'the downstream handler observed the cancellation',
      );
      assert.equal(textOf(await wb.useTool('tb', 'tb__fx__echo', { text: 'next' })), 'next');
    } finally {
      await wb.close();
    }
  });
});

describe('server-to-client requests are relayed', () => {
  it('relays sampling, elicitation and roots to a client that declares them', async () => {
    const wb = await startWorkbench(
      { toolboxes: { demo: { mcpServers: { everything: everythingServer() } } } },
      { clientCapabilities: { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } } },
    );
    const requests: string[] = [];
    wb.client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      requests.push('sampling');
      const first = request.params.messages[0]?.content;
      const prompt = first && 'type' in first && first.type === 'text' ? first.text : '';
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `sampled: ${prompt.slice(0, 40)}` } };
    });
    wb.client.setRequestHandler(ElicitRequestSchema, async () => {
      requests.push('elicitation');
      return { action: 'accept', content: { name: 'Ada Lovelace' } };
    });
    wb.client.setRequestHandler(ListRootsRequestSchema, async () => {
      requests.push('roots');
      return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
    });
    try {
      const catalog = (await wb.call('open_toolbox', { toolbox_name: 'demo' })).structuredContent as { tools: { original_name: string }[] };
      const names = catalog.tools.map((t) => t.original_name);
      for (const conditional of ['trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']) {
        assert.ok(names.includes(conditional), `${conditional} is offered because the client declared the capability`);
      }
      const sampled = await wb.useTool('demo', 'demo__everything__trigger-sampling-request', { prompt: 'hello there' });
      assert.notEqual(sampled.isError, true, textOf(sampled));
      assert.match(JSON.stringify(sampled.content), /sampled: /);
      const elicited = await wb.useTool('demo', 'demo__everything__trigger-elicitation-request', {});
      assert.match(JSON.stringify(elicited.content), /Ada Lovelace/);
      const roots = await wb.useTool('demo', 'demo__everything__get-roots-list', {});
      assert.match(JSON.stringify(roots.content), /file:\/\/\/work\/project/);
      assert.ok(requests.includes('sampling') && requests.includes('elicitation') && requests.includes('roots'));
    } finally {
      await wb.close();
    }
  });

  it('declares no such capability downstream for a client that has none', async () => {
    const wb = await startWorkbench({ toolboxes: { demo: { mcpServers: { everything: everythingServer() } } } });
    try {
      const catalog = (await wb.call('open_toolbox', { toolbox_name: 'demo' })).structuredContent as { tools: { original_name: string }[] };
      const names = catalog.tools.map((t) => t.original_name);
      assert.equal(names.includes('trigger-sampling-request'), false);
      assert.equal(names.includes('get-roots-list'), false);
    } finally {
      await wb.close();
    }
  });
});

describe('downstream notifications, catalogs and limits', () => {
  it('forwards downstream log messages marked with their toolbox and server', async () => {
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } });
    const messages: LoggingMessageNotification['params'][] = [];
    wb.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
    try {
      await wb.useTool('tb', 'tb__fx__log', { level: 'warning', message: 'disk almost full' });
      assert.ok(await waitFor(() => messages.length > 0, 3000));
      assert.equal(messages[0]!.logger?.startsWith('tb/fx'), true);
      assert.equal(messages[0]!.level, 'warning');
      assert.match(JSON.stringify(messages[0]!.data), /disk almost full/);
    } finally {
      await wb.close();
    }
  });

  it('refreshes a server\'s catalog on tools/list_changed and reads every page', async () => {
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { fx: fixtureServer('--list-changed', '--page-size', '3') } } } });
    try {
      const open = async () =>
        ((await wb.call('open_toolbox', { toolbox_name: 'tb' })).structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
      const before = await open();
      assert.ok(before.includes('tb__fx__x') && before.includes('tb__fx__echo') && before.length > 12, 'all pages were read');
      await wb.useTool('tb', 'tb__fx__add_tool', { name: 'fresh_tool' });
      assert.ok(await waitFor(async () => (await open()).includes('tb__fx__fresh_tool'), 5000), 'the new tool appears');
      assert.notEqual((await wb.useTool('tb', 'tb__fx__fresh_tool', {})).isError, true);
    } finally {
      await wb.close();
    }
  });

  it('skips malformed catalog entries and refuses unreadable results, while the rest of the server works', async () => {
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { odd: fixtureServer('--malformed') } } } });
    try {
      const catalog = (await wb.call('open_toolbox', { toolbox_name: 'tb' })).structuredContent as OpenToolboxResult;
      assert.deepEqual(catalog.servers_failed, []);
      const names = catalog.tools.map((t) => t.original_name);
      assert.ok(names.includes('add') && !names.includes('no_schema'), names.join(', '));
      assert.equal(catalog.tools.length, 17, 'only the two malformed entries were left out');
      const bad = await wb.useTool('tb', 'tb__odd__echo', { text: 'x' });
      assert.equal(workbenchErrorCode(bad), 'INVALID_OUTPUT');
      assert.match(textOf(bad), /"content" that is not a list/);
      assert.deepEqual((await wb.useTool('tb', 'tb__odd__add', { a: 1, b: 2 })).structuredContent, { sum: 3 });
    } finally {
      await wb.close();
    }
  });

  it('by default refuses a result the client\'s stdio transport could not take (over 8 MiB), and the session lives on', async () => {
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { fx: fixtureServer('--odd') } } } });
    try {
      // 9 MiB: passed on, the SDK client would close the whole connection at 10 MiB of one line.
      const big = (await wb.useTool('tb', 'tb__fx__huge', { bytes: 9 * 1024 * 1024 })) as CallToolResult;
      assert.equal(workbenchErrorCode(big), 'MESSAGE_TOO_LARGE', textOf(big).slice(0, 300));
      assert.equal(textOf(await wb.useTool('tb', 'tb__fx__echo', { text: 'still here' })), 'still here');
    } finally {
      await wb.close();
    }
  });

  it('refuses a result over the message limit with a clear error and keeps serving', async () => {
    const wb = await startWorkbench(
      { toolboxes: { tb: { mcpServers: { fx: fixtureServer('--odd') } } } },
      { env: { WORKBENCH_MAX_MESSAGE_BYTES: String(1024 * 1024) } },
    );
    try {
      const fine = await wb.useTool('tb', 'tb__fx__huge', { bytes: 512 * 1024 });
      assert.equal(textOf(fine).length, 512 * 1024);
      const big = (await wb.useTool('tb', 'tb__fx__huge', { bytes: 3 * 1024 * 1024 })) as CallToolResult;
      assert.equal(big.isError, true);
      assert.equal(workbenchErrorCode(big), 'MESSAGE_TOO_LARGE');
      // The Python SDK writes the id before the result: found there too, so the call does not wait out its timeout.
      const idFirst = (await wb.useTool('tb', 'tb__fx__huge_id_first', { bytes: 3 * 1024 * 1024 })) as CallToolResult;
      assert.equal(workbenchErrorCode(idFirst), 'MESSAGE_TOO_LARGE');
      assert.equal(textOf(await wb.useTool('tb', 'tb__fx__echo', { text: 'still here' })), 'still here');
    } finally {
      await wb.close();
    }
  });
});
