import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { inputRound } from '../helpers/input-round.js';
import { everythingServer, fixtureServer, node, paths, tempDir, waitFor } from '../helpers/workbench-process.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// Clients of both protocol eras on the same workbench (README "Protocol eras"): SDK v2 clients pinned to the
// handshake era and to MCP 2026-07-28, over stdio and over HTTP, calling tools of a legacy server and having that
// server's sampling and elicitation requests relayed to the client whose call caused them.

const CONFIG = {
  toolboxes: {
    mixed: { mcpServers: { fixture: fixtureServer('--odd'), everything: everythingServer() } },
  },
};

type Era = 'legacy' | 'modern';

interface Asked {
  elicit: string[];
  sample: string[];
}

function eraClient(era: Era, name: string): { client: Client; asked: Asked } {
  const client = new Client(
    { name, version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} }, sampling: {} },
      versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' },
    },
  );
  const asked: Asked = { elicit: [], sample: [] };
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.elicit.push(request.params.message);
    return { action: 'accept', content: { name: name } };
  });
  client.setRequestHandler('sampling/createMessage', async () => {
    asked.sample.push('asked');
    return { role: 'assistant', content: { type: 'text', text: `sampled by ${name}` }, model: 'test-model' };
  });
  return { client, asked };
}

function text(result: unknown): string {
  const r = result as CallToolResult;
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

async function useTool(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'mixed', tool_name: tool, arguments: args } })) as CallToolResult;
}

/** What every era client must be able to do on the workbench. */
async function journey(client: Client, asked: Asked, name: string): Promise<void> {
  const list = await client.listTools();
  assert.deepEqual(list.tools.map((t) => t.name).sort(), ['open_toolbox', 'use_tool']);
  const open = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mixed' } })) as CallToolResult;
  assert.notEqual(open.isError, true, text(open));
  assert.match(text(open), /mixed__fixture__echo/);
  assert.match(text(open), /mixed__everything__echo/);

  const echo = await useTool(client, 'mixed__fixture__echo', { text: 'hi' });
  assert.notEqual(echo.isError, true, text(echo));
  assert.match(text(echo), /hi/);
  const everything = await useTool(client, 'mixed__everything__echo', { message: 'hello' });
  assert.equal(text(everything), 'Echo: hello');

  const elicited = await useTool(client, 'mixed__fixture__ask', { kind: 'elicitation' });
  assert.notEqual(elicited.isError, true, text(elicited));
  assert.deepEqual(JSON.parse(text(elicited)), { action: 'accept', content: { name } });
  assert.deepEqual(asked.elicit, ['name?']);

  const sampled = await useTool(client, 'mixed__fixture__ask', { kind: 'sampling' });
  assert.notEqual(sampled.isError, true, text(sampled));
  assert.match(text(sampled), new RegExp(`sampled by ${name}`));
  assert.equal(asked.sample.length, 1);
}

describe('clients of both protocol eras over stdio', () => {
  for (const era of ['legacy', 'modern'] as const) {
    test(`an SDK v2 client pinned to the ${era} era opens, calls and answers relayed requests`, async () => {
      const { dir, cleanup } = await tempDir();
      try {
        const configPath = join(dir, 'config.json');
        await writeFile(configPath, JSON.stringify(CONFIG));
        const { client, asked } = eraClient(era, `stdio-${era}`);
        const transport = new StdioClientTransport({ command: node, args: [paths.cli, 'serve', '--config', configPath], cwd: dir, stderr: 'pipe' });
        // The era is known: no probe (the SDK would otherwise start the workbench a second time to probe it).
        await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
        try {
          assert.equal(client.getProtocolEra(), era);
          await journey(client, asked, `stdio-${era}`);
        } finally {
          await client.close();
        }
      } finally {
        await cleanup();
      }
    });
  }
});

describe('clients of both protocol eras over HTTP, at the same time', () => {
  let wb: HttpWorkbench;
  before(async () => {
    wb = await startHttpWorkbench(CONFIG, ['--http', '0']);
  });
  after(async () => {
    await wb?.stop();
  });

  test('a legacy and a modern client each get only their own relayed requests', async () => {
    const legacy = eraClient('legacy', 'http-legacy');
    const modern = eraClient('modern', 'http-modern');
    await legacy.client.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
    await modern.client.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
    try {
      assert.equal(legacy.client.getProtocolEra(), 'legacy');
      assert.equal(modern.client.getProtocolEra(), 'modern');
      await Promise.all([journey(legacy.client, legacy.asked, 'http-legacy'), journey(modern.client, modern.asked, 'http-modern')]);
    } finally {
      await legacy.client.close().catch(() => {});
      await modern.client.close().catch(() => {});
    }
  });

  test('a modern client sees the input round itself, and answers it with a retry', async () => {
    const { client } = eraClient('modern', 'manual');
    await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
    try {
      const params = { name: 'use_tool', arguments: { toolbox_name: 'mixed', tool_name: 'mixed__fixture__ask', arguments: { kind: 'elicitation' } } };
      const first = inputRound(await client.callTool(params, { allowInputRequired: true }));
      const keys = Object.keys(first.inputRequests);
      assert.equal(keys.length, 1);
      const asked = first.inputRequests[keys[0]!]!;
      assert.ok(asked.method === 'elicitation/create', `an elicitation: ${JSON.stringify(asked)}`);
      assert.equal(asked.params.message, 'name?');

      // A retry must repeat the call that asked: under another tool, or with other arguments, it is refused (and the
      // round stays held for the right retry) — it would otherwise finish the first call and answer as this one.
      const answers = { [keys[0]!]: { action: 'accept', content: { name: 'stolen' } } };
      for (const [other, why] of [
        [{ toolbox_name: 'mixed', tool_name: 'mixed__fixture__echo', arguments: { text: 'hello' } }, /continues a call of another tool/],
        [{ ...params.arguments, arguments: { kind: 'sampling' } }, /continues a call with other arguments/],
      ] as const) {
        const refused = (await client.callTool({ name: 'use_tool', arguments: other, inputResponses: answers, requestState: first.requestState } as typeof params, { allowInputRequired: true })) as CallToolResult;
        assert.equal(refused.isError, true, text(refused));
        assert.match(text(refused), why);
      }

      const retry = await client.callTool(
        // Retry params of MCP 2026-07-28 (the SDK's CallToolRequest type does not list them yet).
        { ...params, inputResponses: { [keys[0]!]: { action: 'accept', content: { name: 'manual answer' } } }, requestState: first.requestState } as typeof params,
        { allowInputRequired: true },
      );
      assert.deepEqual(JSON.parse(text(retry)), { action: 'accept', content: { name: 'manual answer' } });

      // The round is gone once answered: the same requestState again is refused with what to do.
      const again = (await client.callTool(
        { ...params, inputResponses: { [keys[0]!]: { action: 'accept', content: { name: 'x' } } }, requestState: first.requestState } as typeof params,
        { allowInputRequired: true },
      )) as CallToolResult;
      assert.equal(again.isError, true);
      assert.match(text(again), /not held by this workbench.*Call use_tool again without requestState/s);

      // A forged requestState never reaches a round.
      await assert.rejects(
        client.callTool({ ...params, inputResponses: {}, requestState: 'v1.forged.state' } as typeof params, { allowInputRequired: true }),
        /Invalid or expired requestState/,
      );
    } finally {
      await client.close().catch(() => {});
    }
  });
});

describe('a modern client hears of a config reload on its subscriptions/listen stream', () => {
  for (const transport of ['stdio', 'http'] as const) {
    test(`over ${transport}`, async () => {
      const { dir, cleanup } = await tempDir();
      const configPath = join(dir, 'config.json');
      await writeFile(configPath, JSON.stringify(CONFIG));
      const { client } = eraClient('modern', `listen-${transport}`);
      let changed = 0;
      client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
      let wb: HttpWorkbench | undefined;
      try {
        if (transport === 'stdio') {
          await client.connect(new StdioClientTransport({ command: node, args: [paths.cli, 'serve', '--config', configPath], cwd: dir, stderr: 'pipe' }));
        } else {
          wb = await startHttpWorkbench(CONFIG, ['--http', '0']);
          await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)));
        }
        const subscription = await client.listen({ toolsListChanged: true });
        try {
          const reloaded = { toolboxes: { ...CONFIG.toolboxes, added: { mcpServers: { everything: everythingServer() } } } };
          await writeFile(wb ? wb.configPath : configPath, JSON.stringify(reloaded));
          assert.ok(await waitFor(() => changed > 0, 15_000), 'tools/list_changed arrived on the listen stream');
          const { tools } = await client.listTools({}, { cacheMode: 'refresh' } as never);
          const open = tools.find((t) => t.name === 'open_toolbox')!;
          assert.ok(JSON.stringify(open.inputSchema).includes('"added"'), 'the meta-tools carry the new toolbox name');
        } finally {
          await subscription.close().catch(() => {});
        }
      } finally {
        await client.close().catch(() => {});
        await wb?.stop();
        await cleanup();
      }
    });
  }
});
