import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { fixtureEvents, fixtureServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

// README "Downstream servers: lifecycle, timeouts and limits": a server killed by a signal (the OOM killer, a user's
// `kill -9`) while a call waits on it fails that call at once as SERVER_EXITED, retryable, naming the signal; the
// next call starts it again, and its neighbour answers throughout.

const combos: [Over, EraName][] = [['stdio', 'legacy'], ['http', 'modern']];
describe('a server killed by SIGKILL mid-call, beside a healthy one', () => {
  for (const [over, era] of combos) {
    it(`fails the call naming the signal, restarts on the next call (${over}, ${era} client)`, async () => {
      // The fixture's event log (in the test's own temp dir) tells when the call has reached the server.
      const { dir, cleanup } = await tempDir('wb-killed-');
      const events = join(dir, 'fx-events.jsonl');
      const config = { toolboxes: { tb: { mcpServers: { ok: fixtureServer('--name', 'ok'), fx: fixtureServer('--log', events) } } } };
      const wb = await startEra(over, era, config);
      try {
        const use = async (tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
          (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: args } })) as CallToolResult;
        const pid = Number(textOf(await use('tb__fx__pid')));
        const hung = use('tb__fx__hang');
        await waitFor(async () => (await fixtureEvents(events)).some((e) => e.event === 'call' && e.tool === 'hang' && e.pid === pid), { timeoutMs: 20_000, what: 'the hang call to reach the server' });
        process.kill(pid, 'SIGKILL');
        const failed = await hung;
        assert.equal(failed.isError, true);
        assert.equal(workbenchErrorCode(failed), 'SERVER_EXITED', textOf(failed));
        assert.match(textOf(failed), /killed by SIGKILL/);
        assert.match(textOf(failed), /restarted on the next call/);
        assert.equal((failed._meta?.['mcp-workbench/error'] as { retryable?: boolean } | undefined)?.retryable, true);
        assert.equal(textOf(await use('tb__ok__echo', { text: 'still here' })), 'still here');
        const after = Number(textOf(await use('tb__fx__pid')));
        assert.ok(after > 0 && after !== pid, `a new process: ${after}`);
      } finally {
        await wb.close();
        await cleanup();
      }
    });
  }
});
