import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { eraClient, type EraName } from '../helpers/era-workbench.js';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { logLines } from '../helpers/log-lines.js';
import { fixtureServer, memoryServer, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

/**
 * README "Serving over HTTP", "Servers per session": a session's own stdio servers are ended when the session ends —
 * by DELETE, idle expiry or shutdown; an MCP 2026-07-28 client, which has no DELETE, by idle expiry. Their processes
 * go (none left running, none left a zombie of the workbench), what the log held back about a server's stdout noise
 * is said as its connection closes (README "Downstream servers", Noise), and the workbench serves the next session.
 */

/** Linux /proc: whether `pid` still exists, a zombie included (kill(pid, 0) succeeds on one too). */
async function exists(pid: number): Promise<boolean> {
  return readFile(`/proc/${pid}/stat`, 'utf8').then(
    () => true,
    () => false,
  );
}

const use = (tool: string, args: Record<string, unknown> = {}): { name: string; arguments: Record<string, unknown> } => ({
  name: 'use_tool',
  arguments: { toolbox_name: 't', tool_name: `t__${tool}`, arguments: args },
});

async function connect(wb: HttpWorkbench, era: EraName): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = eraClient(era);
  const transport = new StreamableHTTPClientTransport(new URL(wb.url));
  await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
  return { client, transport };
}

/**
 * Opens the toolbox and calls both servers: the noisy one twice, so its 4 lines of noise at start and 4 per call make
 * 12 in the minute — 10 logged one by one, 2 held back. Returns the server processes (children of the workbench).
 */
async function useBoth(wb: HttpWorkbench, client: Client): Promise<number[]> {
  await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 't' } });
  const graph = (await client.callTool(use('memory__read_graph'))) as CallToolResult;
  assert.notEqual(graph.isError, true, JSON.stringify(graph));
  for (const text of ['one', 'two']) assert.equal(textOf((await client.callTool(use('noisy__echo', { text }))) as CallToolResult), text);
  const pids = await wb.descendants();
  assert.equal(pids.length, 2, `the two servers run under the workbench: ${pids.join(', ')}`);
  return pids;
}

type Ending = 'DELETE' | 'idle expiry' | 'shutdown';
const cases: { era: EraName; ending: Ending }[] = [
  { era: 'legacy', ending: 'DELETE' },
  { era: 'legacy', ending: 'idle expiry' },
  { era: 'legacy', ending: 'shutdown' },
  { era: 'modern', ending: 'idle expiry' },
];

describe("a serve --http session's own stdio servers when the session ends", () => {
  for (const { era, ending } of cases) {
    it(`${era} client, ${ending}: the processes exit, the held-back noise count is said, the next session is served`, async () => {
      const temp = await tempDir('wb-session-children-');
      const config = { toolboxes: { t: { mcpServers: { memory: memoryServer(join(temp.dir, 'memory.jsonl')), noisy: fixtureServer('--garbage-stdout') } } } };
      // An idle timeout well above the gaps between one session's requests, so only the test's wait expires it.
      const idle = ending === 'idle expiry' ? ['--session-idle-timeout', '3'] : [];
      const wb = await startHttpWorkbench(config, ['--http', '0', '--log-format', 'json', '--log-level', 'debug', ...idle], { MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache') });
      const clients: Client[] = [];
      try {
        const first = await connect(wb, era);
        clients.push(first.client);
        const pids = await useBoth(wb, first.client);
        if (ending === 'DELETE') await first.transport.terminateSession();
        if (ending === 'shutdown') assert.equal(await wb.stop(), 0, wb.stderr());

        const gone = async (): Promise<boolean> => (await Promise.all(pids.map(exists))).every((e) => !e);
        assert.ok(await waitFor(gone, 20_000), `the servers of the ended session exit, none left a zombie (pids ${pids.join(', ')})\n${wb.stderr()}`);
        const heldBack = (): boolean =>
          logLines(wb.stderr()).some((l) => l.scope === 't/noisy' && l.fields.event === 'stdout_noise' && l.fields.suppressed === 2);
        assert.ok(await waitFor(heldBack, 10_000), `the 2 noise lines held back are counted in the log as the connection closes:\n${wb.stderr()}`);
        if (ending === 'shutdown') return;

        assert.deepEqual(await wb.descendants(), [], 'no server process is left under the workbench');
        const next = await connect(wb, era);
        clients.push(next.client);
        const again = await useBoth(wb, next.client);
        assert.ok(again.every((pid) => !pids.includes(pid)), 'the next session has servers of its own');
      } finally {
        await Promise.allSettled(clients.map((c) => c.close()));
        await wb.stop();
        await temp.cleanup();
      }
    });
  }
});
