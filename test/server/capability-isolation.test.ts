import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { everythingServer, memoryServer, startWorkbench, tempDir, textOf } from '../helpers/workbench-process.js';

// What depends on the client stays with the client (README "Serving over HTTP", "Catalog cache"): server-everything
// lists its sampling and elicitation tools only to clients that declare those capabilities. Clients that declare
// other capabilities never share a downstream connection, nor a cached tool list.

const ASKING = ['trigger-elicitation-request', 'trigger-sampling-request'];
const CAPABLE = { sampling: {}, elicitation: { form: {} } };

function config(shared: boolean): unknown {
  return { toolboxes: { ev: { mcpServers: { everything: { ...everythingServer(), shared } } } } };
}

/** A client of either era, as these tests use it. */
type Caller = { callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> };

async function askingTools(client: Caller): Promise<string[]> {
  const opened = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'ev', detail: 'full' } })) as CallToolResult;
  assert.notEqual(opened.isError, true, JSON.stringify(opened.content).slice(0, 500));
  const tools = (opened.structuredContent as { tools: { original_name: string }[] }).tools;
  return tools.map((t) => t.original_name).filter((name) => ASKING.includes(name)).sort();
}

function modernClient(name: string, capabilities: Record<string, unknown>): Client {
  return new Client({ name, version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
}

describe('capabilities decide what a client is shown', () => {
  it('two MCP 2026-07-28 clients of one principal with different capabilities get their own connections', async () => {
    const wb = await startHttpWorkbench(config(false), ['--http', '0']);
    const plain = modernClient('plain', {});
    const capable = modernClient('capable', CAPABLE);
    try {
      await plain.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
      await capable.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
      assert.deepEqual(await askingTools(plain), []);
      assert.deepEqual(await askingTools(capable), ASKING);
      assert.deepEqual(await askingTools(plain), [], 'the first client is not shown what the second could serve');
    } finally {
      await plain.close().catch(() => {});
      await capable.close().catch(() => {});
      await wb.stop();
    }
  });

  it('two handshake-era sessions share a "shared" server only when their capabilities match', async () => {
    const wb = await startHttpWorkbench(config(true), ['--http', '0']);
    try {
      const plain = await wb.connect();
      const capable = await wb.connect({}, { capabilities: CAPABLE });
      const alsoPlain = await wb.connect();
      try {
        assert.deepEqual(await askingTools(capable.client), ASKING);
        assert.deepEqual(await askingTools(plain.client), []);
        assert.deepEqual(await askingTools(alsoPlain.client), []);
      } finally {
        await Promise.allSettled([plain.close(), capable.close(), alsoPlain.close()]);
      }
    } finally {
      await wb.stop();
    }
  });

  it('a tool list cached for one set of capabilities is never shown to a client with another', async () => {
    const { dir, cleanup } = await tempDir();
    const env = { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
    try {
      const first = await startWorkbench(config(false), { env, clientCapabilities: { capabilities: CAPABLE } });
      try {
        assert.deepEqual(await askingTools(first.client), ASKING);
      } finally {
        await first.close();
      }
      const second = await startWorkbench(config(false), { env });
      try {
        // The first answer of a new process comes from the cache when it can: never from the other client's list.
        assert.deepEqual(await askingTools(second.client), []);
      } finally {
        await second.close();
      }
    } finally {
      await cleanup();
    }
  });

  // A search that finds nothing in its toolbox names where the query's words are — from what the asking client was
  // shown, never from another client's lists (README "Search"). Over stdio there is one session, so nothing to keep apart.
  for (const era of ['handshake', '2026-07-28'] as const) {
    it(`a search's hints never name a tool listed only for another client (${era} clients over HTTP)`, async () => {
      const { dir, cleanup } = await tempDir();
      const wb = await startHttpWorkbench(
        { toolboxes: { ev: { mcpServers: { everything: everythingServer() } }, mem: { mcpServers: { memory: memoryServer(join(dir, 'memory.jsonl')) } } } },
        ['--http', '0'],
      );
      const clients: { close(): Promise<void> }[] = [];
      const connect = async (capabilities: Record<string, unknown>): Promise<Caller> => {
        if (era === 'handshake') {
          const session = await wb.connect({}, { capabilities });
          clients.push(session);
          return session.client;
        }
        const client = modernClient('client', capabilities);
        await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
        clients.push(client);
        return client;
      };
      const searchMem = async (client: Caller): Promise<CallToolResult> =>
        (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mem', query: 'trigger elicitation request' } })) as CallToolResult;
      try {
        const capable = await connect(CAPABLE);
        const plain = await connect({});
        assert.deepEqual(await askingTools(capable), ASKING);
        // The capable client's own search: its hint names the tool it was shown in ev (so the hint is there to leak).
        assert.match(textOf(await searchMem(capable)), /ev__everything__trigger-elicitation-request/);
        const answer = await searchMem(plain);
        assert.notEqual(answer.isError, true);
        assert.doesNotMatch(JSON.stringify(answer), /elicitation-request|sampling-request/, 'a tool only the other client was shown');
      } finally {
        await Promise.allSettled(clients.map((c) => c.close()));
        await wb.stop();
        await cleanup();
      }
    });
  }
});
