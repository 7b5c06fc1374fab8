import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, type Over } from '../helpers/era-workbench.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLIENT_WAIT, errorOf, healthyUp } from '../helpers/hung-calls.js';
import { fixtureServer, tempDir } from '../helpers/workbench-process.js';

// One server that hangs at start-up (README "Downstream servers: lifecycle, timeouts and limits") must not make every
// answer wait. A bare tool name (README "Tool names and calls") is resolved across the whole toolbox: the call waits
// for the servers still starting as open_toolbox would (`openWaitMs`); past that, a server that is up and has the name
// serves it, and a name none of them has is answered then, naming the server still starting (not after its limit). An open_toolbox that already waited that long for a server once does not wait for it again. A call to the
// hanging server itself is answered when `useToolWaitMs` runs out, before the client's own limit, with why.

const TRANSPORTS: Over[] = ['stdio', 'http'];

/** A healthy server beside one that never answers `initialize`; the connect limit is far beyond the client's wait. */
const config = {
  openWaitMs: 2_000,
  useToolWaitMs: 3_000,
  toolboxes: {
    mixed: {
      mcpServers: {
        healthy: fixtureServer('--name', 'healthy'),
        stuck: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 300_000 },
      },
    },
  },
};

const pendingOf = (result: CallToolResult): string[] =>
  ((result.structuredContent as { servers_pending?: { server: string }[] } | undefined)?.servers_pending ?? []).map((p) => p.server);

/** A short open wait beside a server whose handshake never comes, given up after 1.5 s. */
const STUCK_AFTER_1500 = {
  openWaitMs: 300,
  useToolWaitMs: 10_000,
  toolboxes: { mixed: { mcpServers: { healthy: fixtureServer('--name', 'healthy'), stuck: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 1_500 } } } },
};

for (const over of TRANSPORTS) {
  for (const era of ERAS) {
    describe(`a toolbox with a server that hangs at start-up (${over}, ${era})`, () => {
      test('a bare name is served by the server that is up, without waiting for the one that hangs', async () => {
        const wb = await startEra(over, era, config);
        try {
          // Up first, so a loaded machine cannot leave it starting past openWaitMs (the bare name then waits only that).
          await healthyUp(wb.client);
          const echoed = (await wb.client.callTool(
            { name: 'use_tool', arguments: { toolbox_name: 'mixed', tool_name: 'echo', arguments: { text: 'still here' } } },
            CLIENT_WAIT,
          )) as CallToolResult;
          assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
          assert.match(JSON.stringify(echoed.content), /still here/);
        } finally {
          await wb.close();
        }
      });

      test('an open that already waited its openWaitMs for the server does not wait for it again', async () => {
        const wb = await startEra(over, era, config);
        try {
          const first = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mixed' } }, CLIENT_WAIT)) as CallToolResult;
          assert.ok(pendingOf(first).includes('stuck'), JSON.stringify(first.structuredContent));
          // The healthy server is up before the second open (a call by its full name waits for it), so only the stuck
          // one is left to wait for.
          const call = { toolbox_name: 'mixed', tool_name: 'mixed__healthy__echo', arguments: { text: 'up' } };
          assert.notEqual(((await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult).isError, true);
          const progress: string[] = [];
          const again = (await wb.client.callTool(
            { name: 'open_toolbox', arguments: { toolbox_name: 'mixed' } },
            { ...CLIENT_WAIT, onprogress: (p) => progress.push(p.message ?? '') },
          )) as CallToolResult;
          assert.deepEqual(pendingOf(again), ['stuck'], 'still shown as starting');
          assert.deepEqual(progress, [], 'no wait, so nothing to report while waiting');
        } finally {
          await wb.close();
        }
      });

      test('a name no server has is answered at once when the hanging server\'s cached list does not have it', async () => {
        const temp = await tempDir('wb-hang-cached-');
        try {
          // The same command and args both times (one catalog cache entry): the server answered the first run and
          // hangs from the second on. useToolWaitMs is far beyond the client's wait, so a call that waits fails.
          const hangFlag = join(temp.dir, 'hang-now');
          const cached = {
            useToolWaitMs: 600_000,
            toolboxes: { mixed: { mcpServers: { healthy: fixtureServer('--name', 'healthy'), stuck: { ...fixtureServer('--never-initialize-if', hangFlag), connectTimeoutMs: 600_000 } } } },
          };
          const env = { MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache') };
          const first = await startEra(over, era, cached, undefined, {}, { env });
          try {
            const opened = (await first.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mixed' } }, CLIENT_WAIT)) as CallToolResult;
            assert.deepEqual((opened.structuredContent as { servers_connected: string[] }).servers_connected.sort(), ['healthy', 'stuck']);
          } finally {
            await first.close();
          }
          await writeFile(hangFlag, '');
          const wb = await startEra(over, era, cached, undefined, {}, { env });
          try {
            const call = { toolbox_name: 'mixed', tool_name: 'no_such_tool', arguments: {} };
            const result = (await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
            assert.equal(result.isError, true, JSON.stringify(result));
            assert.equal(errorOf(result).code, 'TOOL_NOT_FOUND', JSON.stringify(result));
            // a bare name a server that is up has is still served by it
            const echo = { toolbox_name: 'mixed', tool_name: 'echo', arguments: { text: 'still here' } };
            assert.notEqual(((await wb.client.callTool({ name: 'use_tool', arguments: echo }, CLIENT_WAIT)) as CallToolResult).isError, true);
          } finally {
            await wb.close();
          }
          // A bare name every last known list shows disabled is refused at once, as its full name is: nothing waits.
          const shut = { ...cached, toolboxes: { mixed: { ...cached.toolboxes.mixed, disabledTools: ['add'] } } };
          const again = await startEra(over, era, shut, undefined, {}, { env });
          try {
            const call = { toolbox_name: 'mixed', tool_name: 'add', arguments: { a: 1, b: 2 } };
            const result = (await again.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
            assert.equal(errorOf(result).code, 'TOOL_DISABLED', JSON.stringify(result));
          } finally {
            await again.close();
          }
        } finally {
          await temp.cleanup();
        }
      });

      test('a bare name no server that is up has, while one still starts (no list known of it), is a retryable wait, not an unknown name', async () => {
        const wb = await startEra(over, era, config);
        try {
          await healthyUp(wb.client);
          const call = { toolbox_name: 'mixed', tool_name: 'anything', arguments: {} };
          const result = (await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
          assert.deepEqual(errorOf(result), { ...errorOf(result), code: 'CONNECT_TIMEOUT', retryable: true, server: 'stuck' }, JSON.stringify(result));
        } finally {
          await wb.close();
        }
      });

      test('a bare or mistyped name no server that is up has is answered by openWaitMs, naming the hanging server and the closest names', async () => {
        // useToolWaitMs and the connect limit are far beyond the client's wait: a call that waits for either fails.
        const wb = await startEra(over, era, { ...config, useToolWaitMs: 600_000 });
        try {
          await healthyUp(wb.client);
          for (const name of ['ecoh', 'mixed_healthy_echo', 'mixd__healthy__echo']) {
            const call = { toolbox_name: 'mixed', tool_name: name, arguments: {} };
            const result = (await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
            const error = result._meta?.['mcp-workbench/error'] as { code?: string; retryable?: boolean; server?: string; hint?: string };
            assert.deepEqual([error.code, error.retryable, error.server], ['CONNECT_TIMEOUT', true, 'stuck'], JSON.stringify(result));
            const text = JSON.stringify(result.content);
            assert.match(text, /no server of toolbox \\"mixed\\" that is up has a tool of that name/, text);
            assert.match(text, /Closest names that are up: mixed__healthy__echo/, text);
            assert.match(text, /Server \\"stuck\\" is still starting \(\d+ s so far\)\. Its tools are not known yet/, text);
            // The next step either way: the closest name if it was a slip, else a retry or the full name, which waits.
            assert.match(error.hint ?? '', /If you meant one of the closest names, call it by that name\. If it is a tool of "stuck", call it again shortly, or by its full name \(mixed__stuck__/);
          }
        } finally {
          await wb.close();
        }
      });

      test('a bare name no server that is up has, while one starts again after a failed start, says how that start ended', async () => {
        const wb = await startEra(over, era, { ...STUCK_AFTER_1500, useToolWaitMs: 600_000 });
        try {
          // The healthy server is up first (its full name waits for it), so only the stuck one is left starting.
          const healthy = { toolbox_name: 'mixed', tool_name: 'mixed__healthy__echo', arguments: { text: 'up' } };
          assert.notEqual(((await wb.client.callTool({ name: 'use_tool', arguments: healthy }, CLIENT_WAIT)) as CallToolResult).isError, true);
          const full = { toolbox_name: 'mixed', tool_name: 'mixed__stuck__echo', arguments: { text: 'x' } };
          assert.match(JSON.stringify(((await wb.client.callTool({ name: 'use_tool', arguments: full }, CLIENT_WAIT)) as CallToolResult).content), /did not complete the MCP handshake/);
          const call = { toolbox_name: 'mixed', tool_name: 'ecoh', arguments: {} };
          const result = (await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
          assert.equal(errorOf(result).code, 'CONNECT_TIMEOUT', JSON.stringify(result));
          const text = JSON.stringify(result.content);
          assert.match(text, /Server \\"stuck\\" is starting again \(\d+ s so far\) and may not answer: its last start failed \d+ s ago: .*did not complete the MCP handshake/, text);
          assert.match(text, /tell the user to run `mcp-workbench doctor`/, text);
        } finally {
          await wb.close();
        }
      });

      test('a server whose last start failed is shown starting again with how that start ended, so opening again is not the fix', async () => {
        const wb = await startEra(over, era, STUCK_AFTER_1500);
        try {
          const noteOf = (result: CallToolResult): string =>
            ((result.structuredContent as { servers_pending?: { server: string; note: string }[] }).servers_pending ?? []).find((p) => p.server === 'stuck')?.note ?? '';
          const first = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mixed' } }, CLIENT_WAIT)) as CallToolResult;
          assert.match(noteOf(first), /^still starting after/);
          // The call joins the start under way and answers once it has failed (the handshake limit passed).
          const call = { toolbox_name: 'mixed', tool_name: 'mixed__stuck__echo', arguments: { text: 'x' } };
          const failed = (await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
          assert.equal(failed.isError, true);
          assert.match(JSON.stringify(failed.content), /did not complete the MCP handshake within 1500 ms/);
          const again = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mixed' } }, CLIENT_WAIT)) as CallToolResult;
          assert.match(noteOf(again), /^starting again .* its last start failed .* ago: .*handshake.* opening the toolbox again will not help/s, JSON.stringify(again.structuredContent));
        } finally {
          await wb.close();
        }
      });

      test('a server whose start failed under use_tool alone (no open before) is shown starting again with how it ended', async () => {
        const wb = await startEra(over, era, STUCK_AFTER_1500);
        try {
          const call = { toolbox_name: 'mixed', tool_name: 'mixed__stuck__echo', arguments: { text: 'x' } };
          const failed = (await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
          assert.match(JSON.stringify(failed.content), /did not complete the MCP handshake within 1500 ms/);
          for (const args of [{ toolbox_name: 'mixed' }, { query: 'echo' }]) {
            const again = (await wb.client.callTool({ name: 'open_toolbox', arguments: args }, CLIENT_WAIT)) as CallToolResult;
            const pending = (again.structuredContent as { servers_pending?: { server: string; note: string }[] }).servers_pending ?? [];
            const note = pending.find((p) => p.server.endsWith('stuck'))?.note ?? '';
            assert.match(note, /^starting again .* its last start failed .* ago: .*handshake.* opening the toolbox again will not help/s, JSON.stringify(again.structuredContent));
          }
        } finally {
          await wb.close();
        }
      });

      test('a handshake that timed out tells the model what to do next, as other start failures do', async () => {
        const wb = await startEra(over, era, STUCK_AFTER_1500);
        try {
          const call = { toolbox_name: 'mixed', tool_name: 'mixed__stuck__echo', arguments: { text: 'x' } };
          const failed = (await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
          const error = failed._meta?.['mcp-workbench/error'] as { code?: string; retryable?: boolean; hint?: string; failure?: { kind?: string } };
          assert.deepEqual([error.code, error.retryable, error.failure?.kind], ['CONNECT_TIMEOUT', true, 'handshake-timeout'], JSON.stringify(failed));
          // The model's next steps: the toolbox's other servers now, a retry later, and who fixes it if it keeps failing.
          assert.match(error.hint ?? '', /use the toolbox's other servers meanwhile/i);
          assert.match(error.hint ?? '', /the next call starts it again/);
          assert.match(error.hint ?? '', /tell the user to run `mcp-workbench doctor`/);
          assert.ok(JSON.stringify(failed.content).includes(JSON.stringify(error.hint).slice(1, -1)), 'the text ends with the same hint');
        } finally {
          await wb.close();
        }
      });

      test('a call to the hanging server gets CONNECT_TIMEOUT (retryable) once useToolWaitMs runs out', async () => {
        const wb = await startEra(over, era, config);
        try {
          const call = { toolbox_name: 'mixed', tool_name: 'mixed__stuck__anything', arguments: {} };
          const result = (await wb.client.callTool({ name: 'use_tool', arguments: call }, CLIENT_WAIT)) as CallToolResult;
          assert.equal(result.isError, true, JSON.stringify(result));
          assert.deepEqual(errorOf(result), { ...errorOf(result), code: 'CONNECT_TIMEOUT', retryable: true, server: 'stuck' });
        } finally {
          await wb.close();
        }
      });
    });
  }
}
