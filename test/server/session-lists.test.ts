import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, memoryServer, node, startWorkbench, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// A tool a server adds for one session is that session's (README "Catalog cache", "Serving over HTTP"): over HTTP an
// isolated session's list is kept in the catalog cache only as its server listed it on connecting, so no other user is
// shown the tool — not from the cache, not in a search's hint. Over stdio there is one user, whose lists are kept as
// they change.

const ADDED = 'alice_quarterly_report';
const TOKENS = ['token-of-alice-0123456789', 'token-of-bob-0123456789ab'];

type Caller = { callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> };

const call = async (client: Caller, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

const openLab = async (client: Caller): Promise<{ tools: string[]; live: boolean }> => {
  const opened = await call(client, 'open_toolbox', { toolbox_name: 'lab' });
  assert.notEqual(opened.isError, true, textOf(opened));
  const answer = opened.structuredContent as { tools: { name: string }[]; servers_connected: string[] };
  return { tools: answer.tools.map((t) => t.name), live: answer.servers_connected.includes('dyn') };
};
const labTools = async (client: Caller): Promise<string[]> => (await openLab(client)).tools;

/** Every file of the catalog cache directory, as text (empty when there is none yet). */
async function cacheText(dir: string): Promise<string> {
  const files = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  const texts = await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8').catch(() => '')));
  return texts.join('\n');
}

function config(dir: string): unknown {
  return { toolboxes: { lab: { mcpServers: { dyn: fixtureServer('--list-changed') } }, mem: { mcpServers: { memory: memoryServer(join(dir, 'memory.jsonl')) } } } };
}

describe('a tool a server added for one session', () => {
  for (const era of ['handshake', '2026-07-28'] as const) {
    it(`is never shown to another user, from the cache or in a hint (${era} clients over HTTP)`, async () => {
      const { dir, cleanup } = await tempDir();
      const wb = await startHttpWorkbench(config(dir), ['--http', '0'], { WORKBENCH_TOKEN: TOKENS.join(',') });
      const open: { close(): Promise<void> }[] = [];
      const connect = async (token: string): Promise<Caller> => {
        const headers = { Authorization: `Bearer ${token}` };
        if (era === 'handshake') {
          const session = await wb.connect(headers);
          open.push(session);
          return session.client;
        }
        const client = new Client({ name: 'modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
        await client.connect(new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers } }));
        open.push(client);
        return client;
      };
      try {
        const alice = await connect(TOKENS[0]!);
        assert.ok((await labTools(alice)).includes('lab__dyn__add_tool'));
        const added = await call(alice, 'use_tool', { toolbox_name: 'lab', tool_name: 'lab__dyn__add_tool', arguments: { name: ADDED } });
        assert.notEqual(added.isError, true, textOf(added));
        assert.ok(await waitFor(async () => (await labTools(alice)).includes(`lab__dyn__${ADDED}`), 10_000), 'the owner sees the tool it added');
        // The list as the server first listed it is cached (the tool Alice added is not).
        const cacheDir = join(wb.dir, 'catalog-cache');
        assert.ok(await waitFor(async () => (await cacheText(cacheDir)).includes('add_tool'), 5_000), 'the list listed on connecting is cached');
        assert.doesNotMatch(await cacheText(cacheDir), new RegExp(ADDED));

        const bob = await connect(TOKENS[1]!);
        // Bob's first answer comes from the cache (his own server is still to connect), his later ones are live.
        const first = await openLab(bob);
        assert.equal(first.live, false, 'the first answer is the cached list');
        assert.ok(first.tools.includes('lab__dyn__add_tool'), first.tools.join(', '));
        assert.ok(!first.tools.includes(`lab__dyn__${ADDED}`), 'not from the cache');
        let live: { tools: string[]; live: boolean } | undefined;
        assert.ok(await waitFor(async () => (live = await openLab(bob)).live, 10_000), "Bob's own server connects");
        assert.ok(live!.tools.includes('lab__dyn__add_tool') && !live!.tools.includes(`lab__dyn__${ADDED}`));
        const search = await call(bob, 'open_toolbox', { toolbox_name: 'mem', query: 'alice quarterly report' });
        assert.doesNotMatch(JSON.stringify(search), new RegExp(ADDED), 'not in a hint');
        // Alice's own search names it (the hint is there to leak).
        assert.match(JSON.stringify(await call(alice, 'open_toolbox', { toolbox_name: 'mem', query: 'alice quarterly report' })), new RegExp(`lab__dyn__${ADDED}`));
        assert.doesNotMatch(await cacheText(cacheDir), new RegExp(ADDED));
      } finally {
        await Promise.allSettled(open.map((c) => c.close()));
        await wb.stop();
        await cleanup();
      }
    });
  }

  it('is kept in the cache over stdio, where its one user is the one who added it', async () => {
    const { dir, cleanup } = await tempDir();
    const cacheDir = join(dir, 'cache');
    const wb = await startWorkbench(config(dir), { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
    try {
      await labTools(wb.client);
      assert.notEqual((await wb.useTool('lab', 'lab__dyn__add_tool', { name: ADDED })).isError, true);
      assert.ok(await waitFor(async () => (await cacheText(cacheDir)).includes(ADDED), 10_000), 'the changed list is cached');
    } finally {
      await wb.close();
      await cleanup();
    }
  });
});

describe("a failure of one session's server", () => {
  it('is never reported to another session (handshake-era sessions over HTTP; a modern user has no session to end)', async () => {
    // The server never answers `initialize`: a connect to it is still under way when the first session ends, and that
    // session's connect fails because it ended. That failure is the first session's, not the server's for everyone.
    const config = {
      toolboxes: {
        slow: { openWaitMs: 200, mcpServers: { hang: fixtureServer('--never-initialize') } },
        other: { mcpServers: { plain: fixtureServer() } },
      },
    };
    const wb = await startHttpWorkbench(config, ['--http', '0', '--log-level', 'debug']);
    try {
      const first = await wb.connect();
      const opened = await call(first.client, 'open_toolbox', { toolbox_name: 'slow' });
      assert.deepEqual((opened.structuredContent as { servers_pending?: unknown[] }).servers_pending?.length, 1, textOf(opened));
      const before = wb.stderr().length;
      await first.close();
      // The first session's connect has failed (logged at debug) before the second session searches.
      assert.ok(await waitFor(() => /\[slow\/hang\] connect stopped/.test(wb.stderr().slice(before)), 10_000), wb.stderr().slice(before));
      const second = await wb.connect();
      try {
        const search = await call(second.client, 'open_toolbox', { query: 'echo' });
        const answer = search.structuredContent as { servers_failed: { server: string; error: string }[]; servers_pending?: { server: string }[] };
        assert.deepEqual(answer.servers_failed, [], JSON.stringify(answer.servers_failed));
        assert.deepEqual(answer.servers_pending?.map((p) => p.server), ['slow/hang'], 'its own connect is under way');
      } finally {
        await second.close();
      }
    } finally {
      await wb.stop();
    }
  });
});

describe('a handshake-era session over HTTP', () => {
  it('is reachable only with the token that opened it: another token gets 404, as for an unknown id', async () => {
    const wb = await startHttpWorkbench({ toolboxes: { fx: { mcpServers: { f: fixtureServer() } } } }, ['--http', '0'], { WORKBENCH_TOKEN: TOKENS.join(',') });
    const alice = await wb.connect({ Authorization: `Bearer ${TOKENS[0]}` });
    try {
      const id = alice.transport.sessionId!;
      assert.ok(id);
      const post = (token: string, method = 'POST'): Promise<Response> =>
        fetch(wb.url, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'mcp-session-id': id, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
          ...(method === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }) } : {}),
        });
      const stolen = await post(TOKENS[1]!);
      const stolenText = await stolen.text();
      assert.equal(stolen.status, 404, stolenText);
      assert.doesNotMatch(stolenText, /open_toolbox/);
      assert.equal((await post(TOKENS[1]!, 'DELETE')).status, 404, 'nor can it end the session');
      // The owner's session is untouched: a raw request with its token and its client both still work.
      const own = await post(TOKENS[0]!);
      const ownText = await own.text();
      assert.equal(own.status, 200, ownText);
      assert.match(ownText, /open_toolbox/);
      assert.deepEqual((await alice.client.listTools()).tools.map((t) => t.name).sort(), ['open_toolbox', 'use_tool']);
    } finally {
      await alice.close();
      await wb.stop();
    }
  });
});

describe('a "shared" server whose tool list turns out private (an SDK v2 default)', () => {
  it('answers the session that connected it from that connection; a session opened later gets one of its own', async () => {
    const { dir, cleanup } = await tempDir();
    const spawnLog = join(dir, 'spawns.jsonl');
    const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
    const server = { command: node, args: [modern, '--private'], env: { FIXTURE_SPAWN_LOG: spawnLog }, shared: true };
    const wb = await startHttpWorkbench({ toolboxes: { lab: { mcpServers: { dyn: server } } } }, ['--http', '0']);
    const spawns = async (): Promise<number> => (await readFile(spawnLog, 'utf8').catch(() => '')).split('\n').filter((l) => l.includes('"spawn"')).length;
    const first = await wb.connect();
    try {
      // The first open connects the shared server and learns its list is private: it is answered with its tools, not
      // left "still starting" while a connection of its own would be made.
      const opened = await openLab(first.client);
      assert.equal(opened.live, true);
      assert.ok(opened.tools.includes('lab__dyn__echo'), opened.tools.join(', '));
      assert.equal(await spawns(), 1);
      const second = await wb.connect();
      try {
        // Its open may answer from the cached list (fresh by the server's ttlMs, so nothing starts); a call connects.
        assert.ok((await openLab(second.client)).tools.includes('lab__dyn__echo'));
        const echoed = await call(second.client, 'use_tool', { toolbox_name: 'lab', tool_name: 'lab__dyn__echo', arguments: { text: 'mine' } });
        assert.equal(textOf(echoed), 'echo: mine');
        assert.equal(await spawns(), 2, 'the later session has a connection of its own');
        assert.ok((await openLab(first.client)).tools.includes('lab__dyn__echo'));
        assert.equal(await spawns(), 2, 'the first session keeps the one it connected');
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      await wb.stop();
      await cleanup();
    }
  });
});
