import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { isAlive } from '../../src/shared/process-tree.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import { fixtureEvents, fixtureServer, startWorkbench, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

describe('downstream connections', () => {
  it('shares one connect per server among many concurrent first calls', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const logA = join(dir, 'a.log');
    const logB = join(dir, 'b.log');
    const running = await startWorkbench({
      toolboxes: { tb: { mcpServers: { a: fixtureServer('--log', logA), b: fixtureServer('--log', logB) } } },
    });
    try {
      const calls: Promise<CallToolResult>[] = [];
      for (let i = 0; i < 24; i++) {
        calls.push(running.useTool('tb', `tb__${i % 2 ? 'a' : 'b'}__echo`, { text: `n${i}` }));
        if (i % 6 === 0) calls.push(running.call('open_toolbox', { toolbox_name: 'tb' }) as Promise<CallToolResult>);
      }
      const results = await Promise.all(calls);
      for (const r of results) assert.notEqual(r.isError, true, textOf(r));
      const startsA = (await fixtureEvents(logA)).filter((e) => e.event === 'start');
      const startsB = (await fixtureEvents(logB)).filter((e) => e.event === 'start');
      assert.equal(startsA.length, 1, 'server a was started once');
      assert.equal(startsB.length, 1, 'server b was started once');
      assert.equal((await running.descendants()).length, 2);
    } finally {
      await running.close();
    }
  });

  it('starts only the server a canonical name needs when use_tool comes before open_toolbox', async () => {
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { a: fixtureServer(), b: fixtureServer(), c: fixtureServer() } } } });
    try {
      assert.equal(textOf(await wb.useTool('tb', 'tb__b__echo', { text: 'only b' })), 'only b');
      assert.equal((await wb.descendants()).length, 1, 'one server started');
      // A bare name may live on any server: the whole toolbox is opened to resolve it (here it is on all three).
      assert.match(textOf(await wb.useTool('tb', 'x', {})), /ambiguous.*tb__a__x, tb__b__x, tb__c__x/);
      assert.equal((await wb.descendants()).length, 3, 'a bare name opens the whole toolbox');
    } finally {
      await wb.close();
    }
  });

  it('reports a server that fails to start per server while the rest of the toolbox works, and retries it on the next open', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const log = join(dir, 'broken.log');
    const wb = await startWorkbench({
      toolboxes: {
        mixed: {
          mcpServers: {
            good: fixtureServer(),
            broken: fixtureServer('--crash-on-start', '3', '--log', log),
            missing: { command: 'definitely-not-a-command-mcp-wb' },
          },
        },
      },
    });
    try {
      const result = (await wb.call('open_toolbox', { toolbox_name: 'mixed' })) as CallToolResult;
      assert.notEqual(result.isError, true);
      const catalog = JSON.parse(textOf(result)) as OpenToolboxResult;
      assert.deepEqual(catalog.servers_connected, ['good']);
      const broken = catalog.servers_failed.find((f) => f.server === 'broken');
      const missing = catalog.servers_failed.find((f) => f.server === 'missing');
      // What happened, as fields.
      assert.equal(broken?.code, 'CONNECT_FAILED');
      assert.deepEqual(broken?.failure, { kind: 'exited', exitCode: 3, stderrTail: ['fixture: fatal startup error'] });
      assert.equal(missing?.code, 'CONNECT_FAILED');
      assert.deepEqual(missing?.failure, { kind: 'command-not-found' });
      assert.ok(catalog.tools.every((t) => t.name.startsWith('mixed__good__')));
      assert.equal(textOf(await wb.useTool('mixed', 'mixed__good__echo', { text: 'still works' })), 'still works');

      const callBroken = await wb.useTool('mixed', 'mixed__broken__echo', { text: 'x' });
      assert.equal(callBroken.isError, true);
      assert.equal(workbenchErrorCode(callBroken), 'CONNECT_FAILED');
      const meta = callBroken._meta?.['mcp-workbench/error'] as { failure?: { kind: string; exitCode?: number } } | undefined;
      assert.equal(meta?.failure?.kind, 'exited');
      assert.equal(meta?.failure?.exitCode, 3);

      await wb.call('open_toolbox', { toolbox_name: 'mixed' });
      const starts = (await fixtureEvents(log)).filter((e) => e.event === 'start').length;
      assert.ok(starts >= 3, `the broken server was retried on each use (started ${starts} times)`);
    } finally {
      await wb.close();
    }
  });

  it('backs off between restarts of a server that keeps crashing, and still recovers', async () => {
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { flaky: fixtureServer() } } } });
    try {
      for (let i = 0; i < 3; i++) {
        const crashed = await wb.useTool('tb', 'tb__flaky__crash', { code: 5 });
        assert.equal(workbenchErrorCode(crashed), 'SERVER_EXITED');
      }
      assert.equal(textOf(await wb.useTool('tb', 'tb__flaky__echo', { text: 'back' })), 'back');
    } finally {
      await wb.close();
    }
  });

  it('ends what a crashed server left running, without waiting for shutdown', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const pidFile = join(dir, 'grandchild.pid');
    const wb = await startWorkbench({ toolboxes: { tb: { mcpServers: { fx: fixtureServer('--grandchild', pidFile) } } } });
    try {
      await wb.useTool('tb', 'tb__fx__echo', { text: 'up' });
      const grandchild = Number(await readFile(pidFile, 'utf8'));
      assert.ok(isAlive(grandchild));
      assert.equal(workbenchErrorCode(await wb.useTool('tb', 'tb__fx__crash', {})), 'SERVER_EXITED');
      assert.ok(await waitFor(() => !isAlive(grandchild), 5000), 'the crashed server\'s helper process was ended');
    } finally {
      await wb.close();
    }
  });

  it('enforces the per-server call timeout, cancels downstream and stays usable', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const log = join(dir, 'hang.log');
    const wb = await startWorkbench({
      toolboxes: { tb: { mcpServers: { slowpoke: { ...fixtureServer('--log', log), timeoutMs: 400 } } } },
    });
    try {
      const result = await wb.useTool('tb', 'tb__slowpoke__hang', {});
      assert.equal(result.isError, true);
      assert.equal(workbenchErrorCode(result), 'CALL_TIMEOUT');
      assert.match(textOf(result), /tool "hang" on server "slowpoke" of toolbox "tb" did not answer within 400 ms/);
      assert.ok(
        await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'cancelled' && e.tool === 'hang'), 5000),
        'the downstream handler saw the cancellation',
      );
      assert.equal(textOf(await wb.useTool('tb', 'tb__slowpoke__echo', { text: 'alive' })), 'alive');
    } finally {
      await wb.close();
    }
  });

  it('kills a server that never answers initialize after connectTimeoutMs', async () => {
    const wb = await startWorkbench({
      toolboxes: { tb: { mcpServers: { mute: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 500 } } } },
    });
    try {
      const result = (await wb.call('open_toolbox', { toolbox_name: 'tb' })) as CallToolResult;
      const failed = (result.structuredContent as { servers_failed: { server: string; error: string }[] }).servers_failed;
      assert.equal(failed[0]?.server, 'mute');
      assert.match(failed[0]?.error ?? '', /did not complete the MCP handshake within 500 ms/);
      assert.ok(await waitFor(async () => (await wb.descendants()).length === 0, 5000), 'the silent server was stopped');
    } finally {
      await wb.close();
    }
  });
});
