import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { eraClient } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureEvents, fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * README "Serving over HTTP", "Servers of each user": a handshake-era HTTP session that ends (DELETE) while its user's
 * `${user:id}` server has a call in flight cancels the call and closes that server's process; the user's next session
 * starts a new one and is served, and the other user's server is untouched.
 */
const TOKENS = ['token-of-alice-0123456789', 'token-of-bob-0123456789ab'];
const call = (tool: string): { name: string; arguments: Record<string, unknown> } => ({
  name: 'use_tool',
  arguments: { toolbox_name: 't', tool_name: `t__mine__${tool}`, arguments: tool === 'echo' ? { text: 'hi' } : {} },
});

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("a handshake-era HTTP session that ends while its user's ${user:id} server has a call in flight", () => {
  it('cancels the call, ends the process, and the next session of that user is served', async () => {
    const temp = await tempDir('wb-user-end-');
    const logs = join(temp.dir, 'logs');
    const server = { ...fixtureServer('--log', join(logs, 'fx-${user:id}.log')), timeoutMs: 600_000 };
    await mkdir(logs);
    const wb = await startHttpWorkbench({ toolboxes: { t: { mcpServers: { mine: server } } } }, ['--http', '0'], { WORKBENCH_TOKEN: TOKENS.join(','), MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache') });
    const open: Client[] = [];
    const connect = async (token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
      const client = eraClient('legacy');
      const transport = new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
      await client.connect(transport, { prior: { kind: 'legacy' } });
      open.push(client);
      return { client, transport };
    };
    try {
      const bob = await connect(TOKENS[1]!);
      assert.notEqual(((await bob.client.callTool(call('echo'))) as CallToolResult).isError, true);
      const alice = await connect(TOKENS[0]!);
      void alice.client.callTool(call('hang'), { timeout: 120_000 }).catch(() => {});
      const files = async (): Promise<string[]> => (await readdir(logs)).map((f) => join(logs, f));
      const aliceLog = async (): Promise<string | undefined> => {
        for (const file of await files()) if ((await fixtureEvents(file)).some((e) => e.event === 'call' && e.tool === 'hang')) return file;
        return undefined;
      };
      assert.ok(await waitFor(async () => (await aliceLog()) !== undefined, 15_000), 'the call reached the server');
      const log = (await aliceLog())!;
      const pid = (await fixtureEvents(log)).find((e) => e.event === 'call')!.pid as number;
      await alice.transport.terminateSession();
      await alice.client.close();
      assert.ok(await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'cancelled' && e.tool === 'hang'), 15_000), 'cancelled downstream');
      assert.ok(await waitFor(async () => !alive(pid), 15_000), `the process of the ended session exits (pid ${pid})`);

      const again = await connect(TOKENS[0]!);
      const echoed = (await again.client.callTool(call('echo'))) as CallToolResult;
      assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
      const bobAgain = (await bob.client.callTool(call('echo'))) as CallToolResult;
      assert.notEqual(bobAgain.isError, true, JSON.stringify(bobAgain));
    } finally {
      await Promise.allSettled(open.map((c) => c.close()));
      await wb.stop();
      await temp.cleanup();
    }
  });
});
