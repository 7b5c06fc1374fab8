import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TRANSPORTS, startOver } from '../helpers/both-transports.js';
import { fixtureServer, textOf, workbenchErrorCode } from '../helpers/workbench-process.js';

// A real toolbox is mixed and partly broken (README "open_toolbox"): one server never answers its handshake, one exits
// at start, one is healthy. open_toolbox answers by the toolbox's openWaitMs with what is ready and names the rest;
// nothing waits for the slowest, and one bad part fails only itself.

const CONFIG = {
  toolboxes: {
    mix: {
      description: 'healthy, hung and crashing servers',
      // Long enough for a Node server to start, or exit, on a loaded 2-core machine; the hung one outlasts it.
      openWaitMs: 4000,
      mcpServers: {
        ok: fixtureServer(),
        hung: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 6000 },
        crash: fixtureServer('--crash-on-start', '3'),
      },
    },
    dead: { description: 'nothing works', mcpServers: { crash: fixtureServer('--crash-on-start', '4') } },
  },
  openWaitMs: 4000,
  // A toolset across the mixed toolbox: opened by name like a toolbox, under the same deadline.
  toolsets: { picks: { description: 'echo from every server', tools: ['mix__*__echo'] } },
};

interface Head {
  servers_connected: string[];
  servers_failed: { server: string; code: string; error: string }[];
  servers_pending?: { server: string; state: string; seconds: number; note: string }[];
  tools: { name: string }[];
}

function head(result: CallToolResult): Head {
  const body = result.structuredContent as Head | undefined;
  assert.ok(body, `a structured answer: ${textOf(result)}`);
  return body;
}

for (const transport of TRANSPORTS) {
  describe(`a toolbox with a hung and a crashing server (${transport})`, () => {
    it('answers by openWaitMs with the healthy tools, names the others, reports progress, and calls the healthy server', async () => {
      const wb = await startOver(transport, CONFIG);
      try {
        const progress: { progress: number; total?: number; message?: string }[] = [];
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mix' } }, undefined, {
          onprogress: (p) => progress.push(p),
        })) as CallToolResult;
        assert.notEqual(opened.isError, true, textOf(opened));
        const answer = head(opened);
        assert.deepEqual(answer.servers_connected, ['ok']);
        assert.ok(answer.tools.some((t) => t.name === 'mix__ok__echo'));
        assert.deepEqual(
          answer.servers_failed.map((f) => [f.server, f.code]),
          [['crash', 'CONNECT_FAILED']],
        );
        assert.match(answer.servers_failed[0]!.error, /exited with code 3/);
        assert.deepEqual(
          answer.servers_pending?.map((p) => [p.server, p.state]),
          [['hung', 'starting']],
        );
        assert.match(answer.servers_pending![0]!.note, /open the toolbox again|use_tool/);
        assert.ok(progress.length > 0, 'progress while waiting for the hung server');
        assert.ok(progress.every((p) => p.total === 3 && typeof p.message === 'string'));

        const echo = await wb.useTool('mix', 'mix__ok__echo', { text: 'still here' });
        assert.notEqual(echo.isError, true, textOf(echo));
        assert.match(textOf(echo), /still here/);

        // A search across every toolbox answers too, naming what is not ready.
        const searched = await wb.call('open_toolbox', { query: 'echo text' });
        assert.notEqual(searched.isError, true, textOf(searched));
        assert.ok(head(searched).tools.some((t) => t.name === 'mix__ok__echo'));

        // A call to the hung server waits for it, within its own connectTimeoutMs, and says why it failed.
        const hung = await wb.useTool('mix', 'mix__hung__echo', { text: 'x' });
        assert.equal(hung.isError, true);
        assert.equal(workbenchErrorCode(hung), 'CONNECT_TIMEOUT');
        const meta = hung._meta?.['mcp-workbench/error'] as { retryable?: boolean } | undefined;
        assert.equal(meta?.retryable, true, 'a timeout may pass: retrying later is worth it');
        const unknown = await wb.useTool('mix', 'mix__ok__no_such_tool', {});
        assert.equal((unknown._meta?.['mcp-workbench/error'] as { retryable?: boolean } | undefined)?.retryable, false, 'an unknown tool stays unknown');
      } finally {
        await wb.close();
      }
    });

    it('a toolset holding the hung server answers by openWaitMs too, naming it as starting', async () => {
      const wb = await startOver(transport, CONFIG);
      try {
        const opened = await wb.call('open_toolbox', { toolbox_name: 'picks' });
        assert.notEqual(opened.isError, true, textOf(opened));
        const answer = head(opened);
        assert.deepEqual(answer.servers_connected, ['mix/ok']);
        assert.deepEqual(answer.tools.map((t) => t.name), ['mix__ok__echo']);
        assert.deepEqual(
          answer.servers_pending?.map((p) => [p.server, p.state]),
          [['mix/hung', 'starting']],
        );
        assert.deepEqual(
          answer.servers_failed.map((f) => f.server),
          ['mix/crash'],
        );
      } finally {
        await wb.close();
      }
    });

    it('a toolset shows a server whose last start failed as starting again, with how that start ended', async () => {
      const wb = await startOver(transport, CONFIG);
      try {
        const failed = await wb.call('use_tool', { toolbox_name: 'picks', tool_name: 'mix__hung__echo', arguments: { text: 'x' } });
        assert.equal(failed.isError, true);
        assert.match(textOf(failed), /did not complete the MCP handshake within 6000 ms/);
        const again = head(await wb.call('open_toolbox', { toolbox_name: 'picks' }));
        const hung = again.servers_pending?.find((p) => p.server === 'mix/hung');
        assert.ok(hung, JSON.stringify(again));
        assert.match(hung.note, /^starting again .* its last start failed .* ago: .*handshake.* opening the toolbox again will not help/s);
      } finally {
        await wb.close();
      }
    });

    it('a toolbox with no working server answers isError with every reason, as a full report', async () => {
      const wb = await startOver(transport, CONFIG);
      try {
        const opened = await wb.call('open_toolbox', { toolbox_name: 'dead' });
        assert.equal(opened.isError, true);
        const answer = head(opened);
        assert.deepEqual(answer.servers_connected, []);
        assert.deepEqual(
          answer.servers_failed.map((f) => f.server),
          ['crash'],
        );
        assert.match(textOf(opened), /exited with code 4/);
        // The rest of the workbench is untouched.
        assert.notEqual((await wb.useTool('mix', 'mix__ok__echo', { text: 'ok' })).isError, true);
      } finally {
        await wb.close();
      }
    });
  });
}
