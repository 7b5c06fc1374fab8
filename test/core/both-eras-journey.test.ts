import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { sampleArgs } from '../helpers/sample-args.js';
import { everythingServer, node, paths, tempDir } from '../helpers/workbench-process.js';

// Any client reaches any server through the workbench (README "Protocol eras"): a handshake-era client and an MCP
// 2026-07-28 client, connected at the same time, open one toolbox holding a handshake-era server (the reference
// server-everything from npm) and a modern-only server (SDK v2 serveStdio, legacy: 'reject'), call every tool, and
// each gets the sampling, elicitation and roots requests its own calls caused — in its own era.

const MODERN_SERVER = join(paths.fixture, '..', 'modern-server.mjs');

const CONFIG = {
  toolboxes: {
    both: {
      mcpServers: {
        old: everythingServer(),
        new: { command: node, args: [MODERN_SERVER] },
      },
    },
  },
};

type Era = 'legacy' | 'modern';

function eraClient(era: Era, name: string): Client {
  const client = new Client(
    { name, version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } },
      versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' },
    },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { answer: `from ${name}` } }));
  client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    content: { type: 'text', text: `sampled by ${name}` },
    model: 'test-model',
  }));
  client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: `file:///roots/${name}`, name }] }));
  return client;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

function errorCode(result: CallToolResult): unknown {
  return (result._meta?.['mcp-workbench/error'] as { code?: unknown } | undefined)?.code;
}

/** Opens the toolbox, calls every tool of both servers, and checks the relayed requests came back to `name`. */
async function everyTool(client: Client, name: string): Promise<void> {
  const use = async (tool: string, args: Record<string, unknown>): Promise<CallToolResult> =>
    (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'both', tool_name: tool, arguments: args } })) as CallToolResult;
  const opened = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'both', detail: 'full' } })) as CallToolResult;
  assert.notEqual(opened.isError, true, text(opened));
  const catalog = opened.structuredContent as { tools: { name: string; source_server: string; original_name: string; inputSchema: unknown }[] };
  const servers = new Set(catalog.tools.map((t) => t.source_server));
  assert.deepEqual([...servers].sort(), ['new', 'old']);

  for (const tool of catalog.tools) {
    const args =
      tool.original_name === 'trigger-long-running-operation' ? { duration: 0.2, steps: 2 } : sampleArgs(tool.inputSchema as never);
    if (tool.original_name === 'nag') {
      // A server that asks again on every round: for a legacy client the workbench answers the rounds and stops after
      // a bounded number, naming the server; a modern client sees the server's rounds itself and stops by its own bound.
      if (client.getProtocolEra() === 'modern') {
        await assert.rejects(use(tool.name, args), /still required input after \d+ rounds/);
      } else {
        const result = await use(tool.name, args);
        assert.equal(result.isError, true);
        assert.match(text(result), /"nag" on server "new" of toolbox "both" asked the client for input \d+ times/);
      }
      continue;
    }
    const result = await use(tool.name, args);
    assert.equal(errorCode(result), undefined, `${tool.name} (${name}): ${text(result)}`);
    // The relayed requests reached this client, and its answers reached the server.
    if (tool.name === 'both__old__trigger-sampling-request') assert.match(text(result), new RegExp(`sampled by ${name}`));
    if (tool.name === 'both__old__trigger-elicitation-request') assert.match(text(result), new RegExp(`from ${name}`));
    if (tool.name === 'both__old__get-roots-list') assert.match(text(result), new RegExp(`roots/${name}`));
    if (tool.name === 'both__new__ask') assert.equal(text(result), `answer: from ${name}`);
    if (tool.name === 'both__new__sample') assert.equal(text(result), `sampled: sampled by ${name}`);
    if (tool.name === 'both__new__roots') assert.equal(text(result), `roots: file:///roots/${name}`);
  }
  const called = new Set(catalog.tools.map((t) => t.name));
  for (const expected of ['both__old__trigger-sampling-request', 'both__old__trigger-elicitation-request', 'both__new__ask', 'both__new__sample', 'both__new__roots']) {
    assert.ok(called.has(expected), `${expected} is in the toolbox`);
  }
}

describe('both eras of clients and servers through one workbench', () => {
  test('over HTTP: a legacy and a modern client at the same time, each calling every tool of a legacy and a modern-only server', async () => {
    const wb = await startHttpWorkbench(CONFIG, ['--http', '0']);
    const legacy = eraClient('legacy', 'legacy-client');
    const modern = eraClient('modern', 'modern-client');
    try {
      await legacy.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
      await modern.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
      assert.equal(legacy.getProtocolEra(), 'legacy');
      assert.equal(modern.getProtocolEra(), 'modern');
      await Promise.all([everyTool(legacy, 'legacy-client'), everyTool(modern, 'modern-client')]);
    } finally {
      await Promise.allSettled([legacy.close(), modern.close()]);
      await wb.stop();
    }
  });

  test('over stdio: a client of each era, at the same time, each calling every tool of a legacy and a modern-only server', async () => {
    const { dir, cleanup } = await tempDir();
    const clients: Client[] = [];
    try {
      const configPath = join(dir, 'config.json');
      await writeFile(configPath, JSON.stringify(CONFIG));
      await Promise.all(
        (['legacy', 'modern'] as const).map(async (era) => {
          const name = `stdio-${era}`;
          const client = eraClient(era, name);
          clients.push(client);
          const transport = new StdioClientTransport({ command: node, args: [paths.cli, 'serve', '--config', configPath, '--no-catalog-cache'], cwd: dir, stderr: 'pipe' });
          await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
          assert.equal(client.getProtocolEra(), era);
          await everyTool(client, name);
        }),
      );
    } finally {
      await Promise.allSettled(clients.map((c) => c.close()));
      await cleanup();
    }
  });
});
