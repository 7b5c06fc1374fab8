import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema, type CallToolResult, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

/**
 * Two users of one `serve --http` never reach each other (README "Serving over HTTP"): each session has its own
 * downstream processes unless a server is `shared`, and a server's requests to a client go only to the session whose
 * call caused them — refused, never guessed, when a shared server has calls from two sessions in flight.
 */
interface User {
  client: Client;
  /** What this user's client was asked (sampling, elicitation). */
  asked: string[];
  use(server: string, tool: string, args?: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

async function connectUser(url: string, name: string, capabilities: Pick<ClientCapabilities, 'sampling' | 'elicitation'>): Promise<User> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  const asked: string[] = [];
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, () => {
      asked.push('sampling');
      return { role: 'assistant', content: { type: 'text', text: `sampled by ${name}` }, model: name };
    });
  }
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked.push('elicitation');
      return { action: 'accept', content: { name } };
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return {
    client,
    asked,
    use: async (server, tool, args, signal) =>
      (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'web', tool_name: `web__${server}__${tool}`, arguments: args ?? {} } }, undefined, {
        signal,
        timeout: 60_000,
      })) as CallToolResult,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

describe('HTTP sessions never see each other', () => {
  let wb: HttpWorkbench;
  let dir: string;
  let cleanup: () => Promise<void>;
  let sharedLog: string;

  before(async () => {
    ({ dir, cleanup } = await tempDir('wb-sessions-'));
    sharedLog = join(dir, 'shared.log');
    wb = await startHttpWorkbench(
      {
        toolboxes: {
          web: {
            mcpServers: {
              // Like a browser: state lives in the process.
              browser: fixtureServer('--odd'),
              stateless: { ...fixtureServer('--odd'), shared: true },
              // Shared too; first connected while both sessions can sample, so it is told the client can (see the
              // README: a shared server is declared what every open session supports, when it connects).
              asking: { ...fixtureServer('--odd', '--log', sharedLog), shared: true },
            },
          },
        },
      },
      ['--http', '127.0.0.1:0'],
    );
  });

  after(async () => {
    await wb?.stop();
    await cleanup?.();
  });

  it("keeps a stateful server's state per session, in a process of each session's own", async () => {
    const [a, b] = await Promise.all([connectUser(wb.url, 'a', {}), connectUser(wb.url, 'b', {})]);
    try {
      assert.equal(textOf(await a.use('browser', 'set', { key: 'cookie', value: 'a-secret' })), 'ok');
      assert.equal(textOf(await b.use('browser', 'get', { key: 'cookie' })), '', "b cannot see a's state");
      assert.equal(textOf(await b.use('browser', 'set', { key: 'cookie', value: 'b-secret' })), 'ok');
      assert.equal(textOf(await a.use('browser', 'get', { key: 'cookie' })), 'a-secret');
      const pidA = textOf(await a.use('browser', 'pid'));
      const pidB = textOf(await b.use('browser', 'pid'));
      assert.notEqual(pidA, pidB);
      // A shared server is one process for both.
      assert.equal(textOf(await a.use('stateless', 'pid')), textOf(await b.use('stateless', 'pid')));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("sends sampling and elicitation from b's call to b only", async () => {
    const [a, b] = await Promise.all([
      connectUser(wb.url, 'a', { sampling: {}, elicitation: {} }),
      connectUser(wb.url, 'b', { sampling: {}, elicitation: {} }),
    ]);
    try {
      const sampled = await b.use('browser', 'ask', { kind: 'sampling' });
      assert.equal(sampled.isError, undefined, textOf(sampled));
      assert.match(textOf(sampled), /sampled by b/);
      const elicited = await b.use('browser', 'ask', { kind: 'elicitation' });
      assert.deepEqual((JSON.parse(textOf(elicited)) as { content: unknown }).content, { name: 'b' });
      assert.deepEqual(b.asked, ['sampling', 'elicitation']);
      assert.deepEqual(a.asked, []);
      // The same through a shared server, while only b has a call in flight on it.
      assert.match(textOf(await b.use('asking', 'ask', { kind: 'sampling' })), /sampled by b/);
      assert.deepEqual(a.asked, []);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("declares to a session's own servers only that session's capabilities", async () => {
    const [a, b] = await Promise.all([connectUser(wb.url, 'a', { sampling: {} }), connectUser(wb.url, 'b', {})]);
    try {
      const result = await b.use('browser', 'ask', { kind: 'sampling' });
      assert.equal(result.isError, true, 'b cannot sample, so its server cannot ask');
      assert.deepEqual(a.asked, [], 'and the request never reaches a, who could');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses a request from a shared server while calls from two sessions are in flight on it', async () => {
    const [a, b] = await Promise.all([
      connectUser(wb.url, 'a', { sampling: {} }),
      connectUser(wb.url, 'b', { sampling: {} }),
    ]);
    const abort = new AbortController();
    try {
      const hanging = a.use('asking', 'hang', {}, abort.signal).catch(() => undefined);
      assert.ok(await waitFor(async () => (await readFile(sharedLog, 'utf8').catch(() => '')).includes('"tool":"hang"'), 10_000));
      const result = await b.use('asking', 'ask', { kind: 'sampling' });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /2 client sessions/);
      assert.deepEqual(a.asked, []);
      assert.deepEqual(b.asked, []);
      abort.abort();
      await hanging;
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('routes a shared connection\'s request by that connection alone: a call of another capability set in flight elsewhere does not count', async () => {
    // Different capabilities, so a shared server runs once for each (README "Serving over HTTP", "Capabilities").
    const [a, b] = await Promise.all([
      connectUser(wb.url, 'a', { sampling: {} }),
      connectUser(wb.url, 'b', { sampling: {}, elicitation: {} }),
    ]);
    const abort = new AbortController();
    try {
      const hangs = async (): Promise<number> => (await readFile(sharedLog, 'utf8').catch(() => '')).split('"tool":"hang"').length;
      const before = await hangs();
      const hanging = a.use('asking', 'hang', {}, abort.signal).catch(() => undefined);
      assert.ok(await waitFor(async () => (await hangs()) > before, 10_000), "a's call is in flight on its connection");
      const result = await b.use('asking', 'ask', { kind: 'sampling' });
      assert.equal(result.isError, undefined, textOf(result));
      assert.match(textOf(result), /sampled by b/);
      assert.notEqual(textOf(await a.use('asking', 'pid')), textOf(await b.use('asking', 'pid')), 'one connection per capability set');
      assert.deepEqual(a.asked, []);
      assert.deepEqual(b.asked, ['sampling']);
      abort.abort();
      await hanging;
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("sends a log message to the session whose call caused it, on its own server and on a shared one", async () => {
    const [a, b] = await Promise.all([connectUser(wb.url, 'a', {}), connectUser(wb.url, 'b', {})]);
    const seen: Record<'a' | 'b', string[]> = { a: [], b: [] };
    a.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.a.push(String(n.params.data)));
    b.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.b.push(String(n.params.data)));
    try {
      await a.use('browser', 'log', { message: 'own-a' });
      await b.use('stateless', 'log', { message: 'shared-b' });
      await a.use('stateless', 'log', { message: 'shared-a' });
      assert.ok(await waitFor(() => seen.a.length >= 2 && seen.b.length >= 1, 5_000), JSON.stringify(seen));
      assert.deepEqual(seen.a.sort(), ['own-a', 'shared-a']);
      assert.deepEqual(seen.b, ['shared-b']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("ends a session's own servers when it closes, and keeps shared ones", async () => {
    const a = await connectUser(wb.url, 'a', {});
    const own = Number(textOf(await a.use('browser', 'pid')));
    const shared = Number(textOf(await a.use('stateless', 'pid')));
    assert.ok((await wb.descendants()).includes(own));
    await a.close();
    assert.ok(await waitFor(async () => !(await wb.descendants()).includes(own), 10_000), 'its own server is gone');
    assert.ok((await wb.descendants()).includes(shared), 'the shared server is still up');
  });
});
