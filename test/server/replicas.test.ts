import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { findNginx, startReverseProxy, type ProxiedRequest, type ReverseProxy } from '../helpers/reverse-proxy.js';
import { join } from 'node:path';
import { fixtureServer, node, paths } from '../helpers/workbench-process.js';

/**
 * Two workbench processes behind a real nginx, as replicas of one service. Round-robin is right for the stateless
 * 2026-07-28 era; a legacy session lives on the replica that created it, so it needs session affinity.
 */

const TOKEN = `replica-token-${randomBytes(16).toString('hex')}`;
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const MODERN_SERVER = join(paths.fixture, '..', 'modern-server.mjs');
const config = {
  toolboxes: {
    fx: { mcpServers: { fixture: fixtureServer() } },
    mx: { mcpServers: { modern: { command: node, args: [MODERN_SERVER] } } },
  },
};

/** A client workload through the proxy at `url`; resolves when every client is done, rejects with the first failure. */
type Workload = (url: string, clients: number) => Promise<void>;

/** What works on every workbench today: plain JSON-RPC POSTs, one legacy `initialize` each (no session needed). */
const plainPosts: Workload = async (url, clients) => {
  for (let i = 0; i < clients; i++) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: `plain-${i}`, version: '1.0.0' } },
      }),
    });
    const body = await response.text();
    assert.equal(response.status, 200, `initialize ${i} through the proxy: HTTP ${response.status} ${body}`);
    assert.match(body, /"serverInfo"/, `initialize ${i} got an initialize result`);
  }
};

/**
 * Many SDK v2 clients pinned to 2026-07-28 at once, each: server/discover (at connect, and once more explicitly),
 * tools/list, open_toolbox and use_tool. Stateless, so every request may land on another replica.
 */
const modernClients: Workload = async (url, clients) => {
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const client = new Client({ name: `modern-${i}`, version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: AUTH } });
      try {
        await client.connect(transport);
        assert.equal(client.getProtocolEra(), 'modern', `client ${i} speaks the 2026-07-28 era`);
        const discovered = await client.discover();
        assert.ok(discovered.supportedVersions.includes('2026-07-28'), `client ${i}: discover offers 2026-07-28`);
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((tool) => tool.name).sort(), ['open_toolbox', 'use_tool']);
        const opened = await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'fx' } });
        assert.ok(!opened.isError, `client ${i}: open_toolbox: ${JSON.stringify(opened)}`);
        const echoed = await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: 'echo', arguments: { text: `hi ${i}` } } });
        assert.equal(textOf(echoed), `hi ${i}`);
      } finally {
        await client.close();
      }
    }),
  );
};

/** One legacy (2025-11-25, Mcp-Session-Id) SDK v1 client: connect, tools/list, open_toolbox, use_tool, DELETE. */
async function legacySession(url: string, i: number): Promise<void> {
  const client = new LegacyClient({ name: `legacy-${i}`, version: '1.0.0' }, { capabilities: {} });
  const transport = new LegacyTransport(new URL(url), { requestInit: { headers: AUTH } });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), ['open_toolbox', 'use_tool']);
    await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'fx' } });
    const echoed = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: 'echo', arguments: { text: `hi ${i}` } } })) as CallToolResult;
    assert.equal(textOf(echoed), `hi ${i}`);
    await transport.terminateSession();
  } finally {
    await client.close();
  }
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : JSON.stringify(result);
}

/** How many of `requests` each replica answered first (a passed-on 404 counts for the replica tried first). */
function firstTries(requests: ProxiedRequest[], replicas: HttpWorkbench[]): number[] {
  return replicas.map((replica) => requests.filter((request) => request.upstreams[0] === new URL(replica.origin).host).length);
}

async function sessionsOn(replica: HttpWorkbench): Promise<number> {
  const health = (await (await fetch(`${replica.origin}/healthz`)).json()) as { sessions: number };
  return health.sessions;
}

/**
 * Without nginx on the machine these tests are skipped with the reason in the output (npm test passes on a machine
 * that has only Node); `.ci/run` installs nginx, so CI always runs them.
 */
const nginxMissing = ((): string | false => {
  try {
    findNginx();
    return false;
  } catch (error) {
    return (error as Error).message;
  }
})();

describe('workbench replicas behind nginx', { skip: nginxMissing }, () => {
  let replicas: HttpWorkbench[] = [];

  before(async () => {
    replicas = await Promise.all([0, 1].map(() => startHttpWorkbench(config, ['--http', '127.0.0.1:0', '--token', TOKEN])));
  });
  after(async () => {
    await Promise.allSettled(replicas.map((replica) => replica.stop()));
  });

  const backends = (): string[] => replicas.map((replica) => new URL(replica.origin).host);

  describe('round-robin', () => {
    let proxy: ReverseProxy;
    before(async () => {
      proxy = await startReverseProxy({ backends: backends(), mode: 'round-robin' });
    });
    after(async () => {
      await proxy?.stop();
    });

    it('sends requests to one replica after the other, with the token passed through', async () => {
      const before = await proxy.requests();
      const sessionsBefore = await Promise.all(replicas.map(sessionsOn));
      await plainPosts(proxy.url, 6);
      const requests = (await proxy.waitForRequests(before.length + 6)).slice(before.length);
      assert.equal(requests.length, 6, `six requests logged:\n${JSON.stringify(requests)}`);
      for (let i = 1; i < requests.length; i++) {
        assert.notEqual(requests[i]!.upstreams[0], requests[i - 1]!.upstreams[0], `request ${i} went to the other replica: ${JSON.stringify(requests)}`);
      }
      assert.deepEqual(firstTries(requests, replicas), [3, 3]);
      // Each replica itself saw its three: a session was opened on each by its initialize.
      const sessionsAfter = await Promise.all(replicas.map(sessionsOn));
      assert.deepEqual(sessionsAfter.map((count, i) => count - sessionsBefore[i]!), [3, 3]);
    });

    it('breaks a legacy session: it lives on one replica, and the other answers 404 for it', async () => {
      const failure = await legacySession(proxy.url, 0).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(failure instanceof Error, 'a legacy session cannot work behind plain round-robin');
      assert.match(failure.message, /404|Session not found/i);
      const refused = (await proxy.requests()).filter((request) => request.status === 404 && request.sessionId !== undefined);
      assert.ok(refused.length > 0, 'nginx logged the 404 for a request carrying the session id');
    });

    it('serves many modern (2026-07-28) clients, stateless, spread over both replicas', async () => {
      const before = (await proxy.requests()).length;
      await modernClients(proxy.url, 8);
      const requests = (await proxy.requests()).slice(before);
      const [first, second] = firstTries(requests, replicas);
      assert.ok(first! > 0 && second! > 0, `both replicas served: ${first} and ${second}`);
      assert.ok(Math.abs(first! - second!) <= 1, `round-robin keeps them even: ${first} and ${second}`);
      assert.ok(requests.every((request) => request.status < 400), `no request was refused: ${JSON.stringify(requests.filter((r) => r.status >= 400))}`);
    });
  });

  describe('input rounds of a modern server, round-robin', () => {
    let proxy: ReverseProxy;
    before(async () => {
      proxy = await startReverseProxy({ backends: backends(), mode: 'round-robin' });
    });
    after(async () => {
      await proxy?.stop();
    });

    it("continue on whichever replica the client's retry reaches: the round travels in the signed requestState", async () => {
      const client = new Client(
        { name: 'asking', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      let asked = 0;
      client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { answer: `answer ${++asked}` } }));
      await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url), { requestInit: { headers: AUTH } }));
      try {
        // The connect's own requests may be logged a moment after their answers: count from a settled log.
        const before = (await proxy.settledRequests()).length;
        for (let i = 1; i <= 4; i++) {
          // One call is two requests (the input-required answer, then the retry): one-by-one through round-robin,
          // the retry always reaches the other replica.
          const result = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'mx', tool_name: 'ask', arguments: { question: `q${i}` } } })) as CallToolResult;
          assert.equal(textOf(result), `answer: answer ${i}`);
        }
        // nginx logs a request after answering it: wait for the last one's line.
        const requests = (await proxy.waitForRequests(before + 8)).slice(before);
        assert.equal(requests.length, 8, `two requests per call: ${JSON.stringify(requests)}`);
        const upstreams = requests.map((request) => request.upstreams.at(-1));
        for (let i = 0; i < 8; i += 2) assert.notEqual(upstreams[i], upstreams[i + 1], `call ${i / 2 + 1} was retried on the other replica`);
        assert.ok(requests.every((request) => request.status < 400));
      } finally {
        await client.close();
      }
    });
  });

  describe('session affinity', () => {
    let proxy: ReverseProxy;
    before(async () => {
      proxy = await startReverseProxy({ backends: backends(), mode: 'session-affinity' });
    });
    after(async () => {
      await proxy?.stop();
    });

    it('keeps each legacy session on its replica while new sessions are spread over both', async () => {
      for (let i = 0; i < 6; i++) await legacySession(proxy.url, i);
      const requests = await proxy.requests();
      const initializes = requests.filter((request) => request.method === 'POST' && request.sessionId === undefined);
      assert.equal(initializes.length, 6, `one session-less POST (initialize) per client: ${JSON.stringify(requests)}`);
      assert.deepEqual(firstTries(initializes, replicas), [3, 3], 'new sessions are spread round-robin');
      const refused = requests.filter((request) => request.status >= 400 && request.method !== 'GET');
      assert.deepEqual(refused, [], 'no request the client sent failed');
      // Every request of a session ended on one replica (a replica without it answered 404 and was skipped).
      const servedBy = new Map<string, Set<string>>();
      for (const request of requests.filter((r) => r.sessionId !== undefined && r.status < 400)) {
        const set = servedBy.get(request.sessionId!) ?? new Set<string>();
        set.add(request.upstreams.at(-1)!);
        servedBy.set(request.sessionId!, set);
      }
      assert.equal(servedBy.size, 6);
      for (const [session, set] of servedBy) assert.equal(set.size, 1, `session ${session} was served by ${[...set].join(' and ')}`);
    });

    it('passes modern (2026-07-28) clients round-robin too: they carry no session id', async () => {
      const before = (await proxy.requests()).length;
      await modernClients(proxy.url, 8);
      const requests = (await proxy.requests()).slice(before);
      const [first, second] = firstTries(requests, replicas);
      assert.ok(first! > 0 && second! > 0, `both replicas served: ${first} and ${second}`);
    });
  });
});
