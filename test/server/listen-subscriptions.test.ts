import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { StreamableHTTPClientTransport, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import { eraClient, startEra, until, type Over } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureEvents, fixtureServer, tempDir } from '../helpers/workbench-process.js';

// Resource subscriptions of a client of MCP 2026-07-28 (README "Resources, prompts and completions"): the URIs its
// subscriptions/listen stream names are subscribed on the owning downstream server, that server's
// notifications/resources/updated reach the stream, and closing the stream unsubscribes them.

describe('a modern client subscribes to resources on subscriptions/listen', () => {
  for (const over of ['stdio', 'http'] as const satisfies readonly Over[]) {
    test(`over ${over}`, async () => {
      const { dir, cleanup } = await tempDir('wb-listen-');
      const log = join(dir, 'a.jsonl');
      const updated: string[] = [];
      const config = { toolboxes: { lab: { mcpServers: { a: fixtureServer('--resources', '--name', 'a', '--log', log) } } } };
      const wb = await startEra(over, 'modern', config, (client) => {
        client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));
      });
      const events = async (name: string): Promise<unknown[]> => (await fixtureEvents(log)).filter((e) => e.event === name).map((e) => e.uri);
      try {
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } })) as CallToolResult;
        assert.notEqual(opened.isError, true, JSON.stringify(opened));
        const subscription = await wb.client.listen({ resourceSubscriptions: ['fixture://a/own'] });
        assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, ['fixture://a/own'], 'the workbench honours resource subscriptions');
        let subscribed = false;
        assert.ok(await until(() => (void events('subscribe').then((uris) => (subscribed = uris.includes('fixture://a/own'))), subscribed)), 'subscribed downstream');

        const touch = async (uri: string): Promise<void> => {
          const result = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri } } })) as CallToolResult;
          assert.notEqual(result.isError, true, JSON.stringify(result));
        };
        await touch('fixture://a/other');
        await touch('fixture://a/own');
        assert.ok(await until(() => updated.includes('fixture://a/own')), `heard ${JSON.stringify(updated)}; stderr: ${wb.stderr().slice(-2000)}`);
        assert.ok(!updated.includes('fixture://a/other'), 'a URI the stream does not name is not delivered');

        await subscription.close();
        let unsubscribed = false;
        assert.ok(await until(() => (void events('unsubscribe').then((uris) => (unsubscribed = uris.includes('fixture://a/own'))), unsubscribed)), 'unsubscribed downstream');
      } finally {
        await wb.close();
        await cleanup();
      }
    });
  }
});

describe('resource updates over --http reach only the principal whose server changed', () => {
  const TOKENS = ['alice-0123456789abcdef0123456789abcdef', 'bob-0123456789abcdef0123456789abcdef0123'] as const;

  test('two users listening on the same URI: each hears only its own server', async () => {
    const { dir, cleanup } = await tempDir('wb-listen-users-');
    const log = join(dir, 'a.jsonl');
    const config = { toolboxes: { lab: { mcpServers: { a: fixtureServer('--resources', '--name', 'a', '--log', log) } } } };
    const wb = await startHttpWorkbench(config, ['--http', '0'], { WORKBENCH_TOKEN: TOKENS.join(','), MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') });
    const heard: Record<string, string[]> = { alice: [], bob: [] };
    const clients: Client[] = [];
    try {
      for (const [who, token] of [['alice', TOKENS[0]], ['bob', TOKENS[1]]] as const) {
        const client = eraClient('modern');
        client.setNotificationHandler('notifications/resources/updated', (n) => void heard[who]!.push(n.params.uri));
        await client.connect(new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
        clients.push(client);
        const opened = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } })) as CallToolResult;
        assert.notEqual(opened.isError, true, JSON.stringify(opened));
        // The second user's open may answer from the catalog cache while its server starts: a call waits for it.
        const ready = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri: 'fixture://a/other' } } })) as CallToolResult;
        assert.notEqual(ready.isError, true, JSON.stringify(ready));
        await client.listen({ resourceSubscriptions: ['fixture://a/own'] });
      }
      const [alice, bob] = clients as [Client, Client];
      const touch = async (client: Client): Promise<void> => {
        const result = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri: 'fixture://a/own' } } })) as CallToolResult;
        assert.notEqual(result.isError, true, JSON.stringify(result));
      };
      // Each user's subscription is on a server process of its own: wait until both are in place.
      let subscribed = 0;
      const countSubscribed = async (): Promise<void> => {
        subscribed = new Set((await fixtureEvents(log)).filter((e) => e.event === 'subscribe').map((e) => e.pid)).size;
      };
      assert.ok(await until(() => (void countSubscribed(), subscribed === 2)), `both server processes subscribed: ${JSON.stringify(await fixtureEvents(log))} ${wb.stderr().slice(-3000)}`);
      await touch(alice);
      assert.ok(await until(() => heard.alice!.length > 0), `alice heard her update; stderr: ${wb.stderr().slice(-2000)}`);
      await touch(bob);
      assert.ok(await until(() => heard.bob!.length > 0), 'bob heard his update');
      // Bob's stream was open when alice's server changed; had the update leaked, it would have come before his own.
      assert.deepEqual(heard.bob, ['fixture://a/own'], "bob heard only his own server's update");
      assert.deepEqual(heard.alice, ['fixture://a/own'], "alice heard only her own server's update");
    } finally {
      await Promise.allSettled(clients.map((c) => c.close()));
      await wb.stop();
      await cleanup();
    }
  });
});

describe('a listen stream that names a URI before its server runs', () => {
  test('subscribes it once the server connects (stdio)', async () => {
    const { dir, cleanup } = await tempDir('wb-listen-early-');
    const log = join(dir, 'a.jsonl');
    const updated: string[] = [];
    const config = { toolboxes: { lab: { mcpServers: { a: fixtureServer('--resources', '--name', 'a', '--log', log) } } } };
    const wb = await startEra('stdio', 'modern', config, (client) => {
      client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));
    });
    try {
      // Nothing runs yet: the URI cannot be routed, so the stream's first attempt only warns.
      await wb.client.listen({ resourceSubscriptions: ['fixture://a/own'] });
      const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } })) as CallToolResult;
      assert.notEqual(opened.isError, true, JSON.stringify(opened));
      let subscribed = false;
      const check = async (): Promise<void> => {
        subscribed = (await fixtureEvents(log)).some((e) => e.event === 'subscribe' && e.uri === 'fixture://a/own');
      };
      assert.ok(await until(() => (void check(), subscribed)), `subscribed once the server connected; stderr: ${wb.stderr().slice(-2000)}`);
      const touched = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri: 'fixture://a/own' } } })) as CallToolResult;
      assert.notEqual(touched.isError, true, JSON.stringify(touched));
      assert.ok(await until(() => updated.includes('fixture://a/own')), `heard ${JSON.stringify(updated)}`);
    } finally {
      await wb.close();
      await cleanup();
    }
  });
});

describe('a config edit that replaces the server a subscription is on (README "Live config reload")', () => {
  for (const [over, era] of [['stdio', 'modern'], ['http', 'modern'], ['stdio', 'legacy']] as const) {
    test(`the subscription is not lost silently (${over}, ${era} client)`, async () => {
      const { dir, cleanup } = await tempDir('wb-listen-reload-');
      const log = join(dir, 'a.jsonl');
      const updated: string[] = [];
      const server = (v: string): Record<string, unknown> => ({ ...fixtureServer('--resources', '--name', 'a', '--log', log), env: { V: v } });
      const wb = await startEra(over, era, { toolboxes: { lab: { mcpServers: { a: server('1') } } } }, (client) => {
        client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));
      });
      const use = async (tool: string, args: Record<string, unknown> = {}): Promise<string> => {
        const result = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: tool, arguments: args } })) as CallToolResult;
        assert.notEqual(result.isError, true, JSON.stringify(result));
        return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      };
      const subscribedBy = async (): Promise<number[]> => (await fixtureEvents(log)).filter((e) => e.event === 'subscribe' && e.uri === 'fixture://a/own').map((e) => Number(e.pid));
      try {
        const first = Number(await use('pid'));
        if (era === 'modern') await wb.client.listen({ resourceSubscriptions: ['fixture://a/own'] });
        else await wb.client.subscribeResource({ uri: 'fixture://a/own' });
        let by: number[] = [];
        assert.ok(await until(() => (void subscribedBy().then((p) => (by = p)), by.includes(first))), 'subscribed on the first process');

        await writeFile(wb.configPath, JSON.stringify({ toolboxes: { lab: { mcpServers: { a: server('2') } } } }));
        if (era === 'legacy') {
          // The end of the subscription is announced as for a lost server; the client reads and subscribes again.
          assert.ok(await until(() => updated.includes('fixture://a/own')), `told the subscription ended; heard ${JSON.stringify(updated)}`);
          await wb.client.subscribeResource({ uri: 'fixture://a/own' });
        }
        let second = first;
        assert.ok(await until(() => (void use('pid').then((p) => (second = Number(p))), second !== first)), 'the edit replaced the server');
        assert.ok(await until(() => (void subscribedBy().then((p) => (by = p)), by.includes(second))), `subscribed on the new process; stderr: ${wb.stderr().slice(-2000)}`);
        updated.length = 0;
        await use('touch', { uri: 'fixture://a/own' });
        assert.ok(await until(() => updated.includes('fixture://a/own')), `an update on the new process is heard; heard ${JSON.stringify(updated)}`);
      } finally {
        await wb.close();
        await cleanup();
      }
    });
  }
});
