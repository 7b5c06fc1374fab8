import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { StreamableHTTPClientTransport, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import { ERAS, eraClient, until } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureEvents, fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

// A `shared: true` server has one connection for every session (README "Serving over HTTP"), and the server keeps one
// subscription per URI on it: one session's unsubscribe must not end another's. The workbench ends it downstream when
// the last session holding it lets go (unsubscribes, closes its listen stream, or ends).

const URI = 'fixture://a/own';

describe('resource subscriptions on a shared server over --http', () => {
  for (const era of ERAS) {
    test(`a handshake-era session and a ${era === 'modern' ? 'MCP 2026-07-28' : 'handshake-era'} one subscribed to one URI`, async () => {
      const { dir, cleanup } = await tempDir('wb-shared-subs-');
      const log = join(dir, 'a.jsonl');
      const config = { toolboxes: { lab: { mcpServers: { a: { ...fixtureServer('--resources', '--name', 'a', '--log', log), shared: true } } } } };
      const wb = await startHttpWorkbench(config, ['--http', '0'], { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') });
      const heard = { a: [] as string[], b: [] as string[] };
      const clients: Client[] = [];
      const connect = async (who: 'a' | 'b', clientEra: (typeof ERAS)[number]): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
        const client = eraClient(clientEra);
        client.setNotificationHandler('notifications/resources/updated', (n) => void heard[who].push(n.params.uri));
        const transport = new StreamableHTTPClientTransport(new URL(wb.url));
        await client.connect(transport, clientEra === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
        clients.push(client);
        const opened = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri: 'fixture://a/other' } } })) as CallToolResult;
        assert.notEqual(opened.isError, true, JSON.stringify(opened));
        return { client, transport };
      };
      const events = async (name: string): Promise<{ uri: unknown; pid: number }[]> =>
        (await fixtureEvents(log)).filter((e) => e.event === name).map((e) => ({ uri: e.uri, pid: e.pid }));
      const count = async (name: string): Promise<number> => (await events(name)).filter((e) => e.uri === URI).length;
      const eventually = async (name: string, n: number): Promise<boolean> => {
        let seen = 0;
        return until(() => (void count(name).then((c) => (seen = c)), seen >= n));
      };
      try {
        const a = await connect('a', 'legacy');
        const b = await connect('b', era);
        await a.client.subscribeResource({ uri: URI });
        const listening = era === 'modern' ? await b.client.listen({ resourceSubscriptions: [URI] }) : undefined;
        if (!listening) await b.client.subscribeResource({ uri: URI });
        assert.ok(await eventually('subscribe', 2), `both subscriptions reach the server; stderr: ${wb.stderr().slice(-2000)}`);
        assert.equal(new Set((await events('subscribe')).map((e) => e.pid)).size, 1, 'one shared process serves both');

        // a lets go: b still holds the URI on the same connection, so nothing is unsubscribed downstream (the fixture
        // logs an unsubscribe before it answers, and the workbench answers a's request after the server's answer).
        await a.client.unsubscribeResource({ uri: URI });
        assert.equal(await count('unsubscribe'), 0, "a's unsubscribe does not end b's subscription");
        const touched = (await b.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri: URI } } })) as CallToolResult;
        assert.notEqual(touched.isError, true, JSON.stringify(touched));
        assert.ok(await until(() => heard.b.includes(URI)), `b still hears updates; heard ${JSON.stringify(heard)}`);
        assert.deepEqual(heard.a, [], 'a, unsubscribed, hears nothing');

        // b lets go too: the last holder, so the subscription ends downstream.
        if (listening) await listening.close();
        else await b.client.unsubscribeResource({ uri: URI });
        assert.ok(await eventually('unsubscribe', 1), 'the last unsubscribe ends it downstream');

        // A session that ends while it holds a subscription no one else holds ends it too.
        await a.client.subscribeResource({ uri: URI });
        assert.ok(await eventually('subscribe', 3));
        await a.transport.terminateSession();
        assert.ok(await eventually('unsubscribe', 2), `an ended session's subscription is ended downstream; stderr: ${wb.stderr().slice(-2000)}`);
      } finally {
        await Promise.allSettled(clients.map((c) => c.close()));
        await wb.stop();
        await cleanup();
      }
    });
  }

  // A shared server runs once per set of client capabilities: two processes, each with its own resources. An update one
  // process sends is about its own resource, so it reaches the sessions of its set only — not a session of another set
  // that subscribed to the same URI on the other process (it used to: any session subscribed to the URI on that server).
  test('an update from the connection of one set of capabilities does not reach the sessions of another', async () => {
    const { dir, cleanup } = await tempDir('wb-shared-sets-');
    const log = join(dir, 'a.jsonl');
    const config = { toolboxes: { lab: { mcpServers: { a: { ...fixtureServer('--resources', '--name', 'a', '--log', log), shared: true } } } } };
    const wb = await startHttpWorkbench(config, ['--http', '0'], { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') });
    const heard = { plain: [] as string[], capable: [] as string[] };
    const clients: Client[] = [];
    const ITEM = 'fixture://a/items/1';
    const touch = async (client: Client, uri: string): Promise<void> => {
      const result = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri } } })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result));
    };
    try {
      const connect = async (who: 'plain' | 'capable', capabilities: Record<string, unknown>): Promise<Client> => {
        const client = eraClient('legacy', capabilities);
        client.setNotificationHandler('notifications/resources/updated', (n) => void heard[who].push(n.params.uri));
        await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)), { prior: { kind: 'legacy' } });
        clients.push(client);
        // The server must be connected for the URI to be routed: a call starts it.
        await touch(client, 'fixture://a/other');
        await client.subscribeResource({ uri: URI });
        return client;
      };
      const plain = await connect('plain', {});
      await plain.subscribeResource({ uri: ITEM });
      const capable = await connect('capable', { elicitation: { form: {} } });
      const pids = new Set((await fixtureEvents(log)).filter((e) => e.event === 'subscribe' && e.uri === URI).map((e) => e.pid));
      assert.equal(pids.size, 2, 'one process per set of capabilities');
      await touch(capable, URI);
      assert.ok(await until(() => heard.capable.includes(URI)), `the capable session hears its process's update; heard ${JSON.stringify(heard)}`);
      // An update relayed to the plain session for the capable one's touch would be on its stream before this one.
      await touch(plain, ITEM);
      assert.ok(await until(() => heard.plain.includes(ITEM)), `heard ${JSON.stringify(heard)}`);
      assert.deepEqual(heard.plain, [ITEM], "the plain session hears nothing of the other process's resource");
    } finally {
      await Promise.allSettled(clients.map((c) => c.close()));
      await wb.stop();
      await cleanup();
    }
  });

  test('a subscribe and another session\'s last unsubscribe sent at once leave the URI subscribed downstream', async () => {
    const { dir, cleanup } = await tempDir('wb-shared-race-');
    const log = join(dir, 'a.jsonl');
    const config = { toolboxes: { lab: { mcpServers: { a: { ...fixtureServer('--resources', '--name', 'a', '--log', log), shared: true } } } } };
    const wb = await startHttpWorkbench(config, ['--http', '0'], { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') });
    const clients: Client[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const client = eraClient('legacy');
        await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)), { prior: { kind: 'legacy' } });
        clients.push(client);
        await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri: 'fixture://a/other' } } });
      }
      const [a, b] = clients as [Client, Client];
      // b's subscribe is held before it is sent, so a's unsubscribe (a the only holder until then) is not sent after it.
      for (let round = 0; round < 5; round++) {
        await a.subscribeResource({ uri: URI });
        await Promise.all([b.subscribeResource({ uri: URI }), a.unsubscribeResource({ uri: URI })]);
        const last = (await fixtureEvents(log)).filter((e) => (e.event === 'subscribe' || e.event === 'unsubscribe') && e.uri === URI).at(-1);
        assert.equal(last?.event, 'subscribe', `round ${round}: b holds the URI, so it stays subscribed downstream`);
        await b.unsubscribeResource({ uri: URI });
      }
    } finally {
      await Promise.allSettled(clients.map((c) => c.close()));
      await wb.stop();
      await cleanup();
    }
  });

  // Handshake-era sessions only: an MCP 2026-07-28 client subscribes through a listen stream, which subscribes again
  // on the new process by itself (and so holds the URI there rightly).
  test('after the shared server restarts, no stale hold keeps a session\'s unsubscribe from reaching the new process', async () => {
    const { dir, cleanup } = await tempDir('wb-shared-restart-');
    const log = join(dir, 'a.jsonl');
    const config = { toolboxes: { lab: { mcpServers: { a: { ...fixtureServer('--resources', '--name', 'a', '--log', log), shared: true } } } } };
    const wb = await startHttpWorkbench(config, ['--http', '0'], { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') });
    const clients: Client[] = [];
    const use = (client: Client, tool: string, args: Record<string, unknown>): Promise<unknown> =>
      client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: tool, arguments: args } });
    const unsubscribes = async (): Promise<{ pid: number }[]> => (await fixtureEvents(log)).filter((e) => e.event === 'unsubscribe' && e.uri === URI);
    try {
      for (let i = 0; i < 2; i++) {
        const client = eraClient('legacy');
        await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)), { prior: { kind: 'legacy' } });
        clients.push(client);
        await use(client, 'touch', { uri: 'fixture://a/other' });
      }
      const [b, a] = clients as [Client, Client];
      await a.subscribeResource({ uri: URI });
      await b.subscribeResource({ uri: URI });
      // The shared process dies with both subscriptions on it; the next call starts a new one, which has none.
      await use(b, 'crash', {}).catch(() => {});
      const pids = async (): Promise<number> => new Set((await fixtureEvents(log)).filter((e) => e.event === 'start').map((e) => e.pid)).size;
      assert.ok(await waitFor(async () => (await use(a, 'touch', { uri: 'fixture://a/other' }), (await pids()) >= 2), 15_000), 'a new process serves');
      // a subscribes on the new process and lets go: nobody else holds the URI there, so it is ended downstream.
      await a.subscribeResource({ uri: URI });
      await a.unsubscribeResource({ uri: URI });
      assert.ok(await waitFor(async () => (await unsubscribes()).length >= 1, 15_000), `the unsubscribe reaches the new process; stderr: ${wb.stderr().slice(-1500)}`);
    } finally {
      await Promise.allSettled(clients.map((c) => c.close()));
      await wb.stop();
      await cleanup();
    }
  });
});
