import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ProtocolError, ResourceNotFoundError, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import { startEra, until } from '../helpers/era-workbench.js';
import { fixtureEvents, fixtureServer, tempDir } from '../helpers/workbench-process.js';

// Resources, prompts and completions against the fixture server's fault modes (README "Resources, prompts and
// completions"): a URI two servers claim, a URI nobody knows, disabled prompts, and a server that dies holding a
// subscription while two sessions share it.

const SOURCE = 'mcp-workbench/source';

function config(logDir: string, shared = false): unknown {
  return {
    toolboxes: {
      lab: {
        // One prompt hidden by the toolbox (by its workbench name), one by its server (by its own name).
        disabledPrompts: ['lab__a__secret-*'],
        mcpServers: {
          a: { ...fixtureServer('--resources', '--name', 'a', '--log', join(logDir, 'a.jsonl')), shared },
          b: { ...fixtureServer('--resources', '--name', 'b'), disabledPrompts: ['secret-*'] },
        },
      },
    },
  };
}

async function useTool(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: tool, arguments: args } })) as CallToolResult;
}

async function open(client: Client): Promise<void> {
  const opened = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } })) as CallToolResult;
  assert.notEqual(opened.isError, true, JSON.stringify(opened));
}

function textOf(result: { contents: unknown[] }): string {
  return (result.contents[0] as { text: string }).text;
}

describe('routing resources between servers', () => {
  for (const era of ['legacy', 'modern'] as const) {
    test(`a URI two servers claim, one nobody knows, templates and disabled prompts (${era} era, stdio)`, async () => {
      const logs = await tempDir();
      const wb = await startEra('stdio', era, config(logs.dir));
      try {
        const client = wb.client;
        await assert.rejects(client.readResource({ uri: 'fixture://a/own' }), (error: unknown) => {
          // The SDK answers a resource that is not found with -32602 and the URI in data (MCP 2026-07-28).
          assert.ok(error instanceof ResourceNotFoundError && error.uri === 'fixture://a/own', String(error));
          assert.match(error.message, /not known to this session.*none yet.*open_toolbox/s);
          return true;
        });
        await open(client);
        await assert.rejects(client.readResource({ uri: 'fixture://shared/notes' }), (error: unknown) => {
          assert.ok(error instanceof ProtocolError && error.code === -32602, String(error));
          assert.match(error.message, /more than one server: "lab\/a", "lab\/b"/);
          assert.match(error.message, new RegExp(`_meta\\["${SOURCE}"\\]`));
          return true;
        });
        const chosen = await client.readResource({ uri: 'fixture://shared/notes', _meta: { [SOURCE]: 'lab/b' } });
        assert.equal(textOf(chosen), 'b: fixture://shared/notes');
        assert.equal(textOf(await client.readResource({ uri: 'fixture://a/own' })), 'a: fixture://a/own');
        assert.equal(textOf(await client.readResource({ uri: 'fixture://b/items/9' })), 'b: fixture://b/items/9', 'routed by template');
        await assert.rejects(client.readResource({ uri: 'fixture://c/items/9' }), /lab\/a", "lab\/b".*lists it or has a template/s);
        await assert.rejects(client.readResource({ uri: 'fixture://shared/notes', _meta: { [SOURCE]: 'lab/zzz' } }), /must name a configured server.*lab\/a, lab\/b/s);

        const completed = await client.complete({ ref: { type: 'ref/resource', uri: 'fixture://a/items/{id}' }, argument: { name: 'id', value: '' } });
        assert.deepEqual(completed.completion.values, ['1', '2']);
        const greeted = await client.complete({ ref: { type: 'ref/prompt', name: 'lab__b__greet' }, argument: { name: 'who', value: 'wo' } });
        assert.deepEqual(greeted.completion.values, ['world', 'workbench']);

        const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
        assert.deepEqual(prompts, ['lab__a__greet', 'lab__b__greet']);
        const hello = await client.getPrompt({ name: 'lab__b__greet', arguments: { who: 'you' } });
        assert.deepEqual(hello.messages, [{ role: 'user', content: { type: 'text', text: 'Hello you from b' } }]);
        await assert.rejects(client.getPrompt({ name: 'lab__b__secret-plan' }), /disabled by "disabledPrompts"/);
        await assert.rejects(client.getPrompt({ name: 'lab__a__secret-plan' }), /disabled by "disabledPrompts"/);
        await assert.rejects(client.getPrompt({ name: 'greet' }), /\{toolbox\}__\{server\}__\{prompt\}/);
      } finally {
        await wb.close();
        await logs.cleanup();
      }
    });
  }

  test('prompts/get connects its server on demand', async () => {
    const logs = await tempDir();
    const wb = await startEra('stdio', 'legacy', config(logs.dir));
    try {
      assert.deepEqual((await wb.client.listPrompts()).prompts, [], 'nothing is started to list prompts');
      const hello = await wb.client.getPrompt({ name: 'lab__a__greet', arguments: { who: 'me' } });
      assert.equal((hello.messages[0]!.content as { text: string }).text, 'Hello me from a');
    } finally {
      await wb.close();
      await logs.cleanup();
    }
  });
});

describe('subscriptions', () => {
  test('updates reach only the subscribing session; a server that dies ends its subscriptions and says so', async () => {
    const logs = await tempDir();
    const heard = { first: [] as string[], second: [] as string[], firstLists: 0 };
    const wb = await startEra('http', 'legacy', config(logs.dir, true), (client) => {
      client.setNotificationHandler('notifications/resources/updated', (n) => void heard.first.push(n.params.uri));
      client.setNotificationHandler('notifications/resources/list_changed', () => void heard.firstLists++);
    });
    try {
      const second = await wb.another();
      second.setNotificationHandler('notifications/resources/updated', (n) => void heard.second.push(n.params.uri));
      await open(wb.client);
      await open(second);
      // List changes reach a handshake-era client that has listed resources.
      assert.equal((await wb.client.listResources()).resources.length, 4);
      await wb.client.subscribeResource({ uri: 'fixture://a/own' });
      assert.ok((await fixtureEvents(join(logs.dir, 'a.jsonl'))).some((e) => e.event === 'subscribe' && e.uri === 'fixture://a/own'));

      // The shared server announces an update during the other session's call: only the subscriber hears of it.
      const touched = await useTool(second, 'lab__a__touch', { uri: 'fixture://a/own' });
      assert.notEqual(touched.isError, true, JSON.stringify(touched));
      assert.ok(await until(() => heard.first.length === 1), 'the subscriber heard of the update');
      await useTool(second, 'lab__a__touch', { uri: 'fixture://a/items/1' });
      await useTool(second, 'lab__a__touch', { uri: 'fixture://a/own' });
      assert.ok(await until(() => heard.first.length === 2));
      assert.deepEqual(heard.first, ['fixture://a/own', 'fixture://a/own'], 'no update for a URI it did not subscribe to');
      assert.deepEqual(heard.second, [], 'the other session heard nothing');

      const lists = heard.firstLists;
      const crashed = await useTool(wb.client, 'lab__a__crash', {});
      assert.equal(crashed.isError, true);
      assert.ok(await until(() => heard.first.length === 3), 'told that the subscribed resource changed (its server is gone)');
      assert.equal(heard.first[2], 'fixture://a/own');
      assert.ok(await until(() => heard.firstLists > lists), 'and that the resource list changed');
      await wb.client.unsubscribeResource({ uri: 'fixture://a/own' });
      assert.equal(textOf(await wb.client.readResource({ uri: 'fixture://a/own' })), 'a: fixture://a/own', 'a read starts the server again');
    } finally {
      await wb.close();
      await logs.cleanup();
    }
  });
});
