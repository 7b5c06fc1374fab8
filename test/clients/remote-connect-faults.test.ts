import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { fixtureServer, textOf } from '../helpers/workbench-process.js';

// Remote servers that cannot be connected at all, next to a healthy stdio server: open_toolbox answers with the
// healthy server's tools and a note for each broken one that says what is wrong and what to do next.

interface FailedEntry {
  server: string;
  error: string;
  code: string;
  retryable: boolean;
  hint?: string;
  failure?: { kind?: string; httpStatus?: number };
}

/** A loopback HTTP server answering every request with `answer` (status, headers, body); the paths it was asked for. */
async function answering(answer: (path: string) => { status: number; headers?: Record<string, string>; body?: string }): Promise<{ url: string; paths: string[]; server: Server }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    const { status, headers, body } = answer(req.url ?? '');
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(body ?? '');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, paths, server };
}

describe('remote servers that cannot be connected, next to a healthy stdio server', () => {
  // A server that wants an OAuth sign-in (401 with a Bearer challenge, no "auth" configured) but publishes no OAuth
  // metadata and has no registration endpoint: the sign-in cannot even start.
  let bearerOnly: Awaited<ReturnType<typeof answering>>;

  before(async () => {
    bearerOnly = await answering((path) =>
      path === '/mcp' ? { status: 401, headers: { 'www-authenticate': 'Bearer realm="mcp"' }, body: 'unauthorized' } : { status: 404, body: 'not here' },
    );
  });
  after(() => {
    bearerOnly?.server.closeAllConnections();
    bearerOnly?.server.close();
  });

  for (const era of ERAS) {
    it(`opens with the healthy server's tools and a note that names each broken remote server's fault (${era} client)`, async () => {
      const gateway = await answering(() => ({ status: 503, body: 'upstream connect error' }));
      const page = await answering(() => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>Sign in</body></html>' }));
      // Accepts connections and never answers a byte; and a port nothing listens on.
      const sockets = new Set<Socket>();
      const silent = createTcpServer((socket) => sockets.add(socket.on('error', () => {})));
      silent.listen(0, '127.0.0.1');
      await once(silent, 'listening');
      const gone = createTcpServer();
      gone.listen(0, '127.0.0.1');
      await once(gone, 'listening');
      const gonePort = (gone.address() as AddressInfo).port;
      await new Promise((resolve) => gone.close(resolve));
      const remote = (url: string): Record<string, unknown> => ({ type: 'http', url, connectTimeoutMs: 2_000 });
      const servers = {
        local: fixtureServer(),
        gateway: remote(gateway.url),
        page: remote(page.url),
        silent: remote(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`),
        gone: remote(`http://127.0.0.1:${gonePort}/mcp`),
        unset: remote('https://${REMOTE_HOST_UNSET}/mcp'),
      };
      const wb = await startEra('stdio', era, { toolboxes: { day: { mcpServers: servers } } });
      try {
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'day', detail: 'full' } })) as CallToolResult;
        const body = opened.structuredContent as { servers_connected: string[]; servers_failed: FailedEntry[]; tools: { name: string }[] };
        assert.deepEqual(body.servers_connected, ['local'], textOf(opened));
        assert.ok(body.tools.some((t) => t.name === 'day__local__echo'));
        const failed = new Map(body.servers_failed.map((f) => [f.server, f]));
        const check = (server: string, code: string, kind: string, error: RegExp, hint: RegExp): void => {
          const entry = failed.get(server);
          assert.ok(entry, `${server} in ${JSON.stringify(body.servers_failed)}`);
          assert.equal(entry.code, code, entry.error);
          assert.equal(entry.failure?.kind, kind, entry.error);
          assert.match(entry.error, new RegExp(`server "${server}" of toolbox "day"`));
          assert.match(entry.error, error);
          assert.match(entry.hint ?? '', hint, entry.error);
        };
        // The cause ends its sentence; what to do next is the hint's, said once.
        check('gateway', 'CONNECT_FAILED', 'http-status', /HTTP 503\.$/, /retry later/);
        check('page', 'CONNECT_FAILED', 'other', /answered with text\/html, not MCP/, /"url"/);
        check('silent', 'CONNECT_TIMEOUT', 'handshake-timeout', /within 2000 ms/, /connectTimeoutMs/);
        check('gone', 'CONNECT_FAILED', 'unreachable', /connection refused/, /running/);
        // A config entry's fix is its problem's (the hint points there rather than repeating it).
        check('unset', 'ENV_MISSING', 'misconfigured', /REMOTE_HOST_UNSET/, /failure\.problems/);
        assert.match(JSON.stringify(failed.get('unset')?.failure), /"fix":"set REMOTE_HOST_UNSET in the environment/);
      } finally {
        await wb.close();
        for (const socket of sockets) socket.destroy();
        silent.close();
        for (const s of [gateway, page]) {
          s.server.closeAllConnections();
          s.server.close();
        }
      }
    });

    it(`a connect refused with 401 or 403 (no sign-in asked for) is not retryable: the credentials must change first (${era} client)`, async () => {
      const refused = await answering(() => ({ status: 401, body: 'bad token' }));
      const forbidden = await answering(() => ({ status: 403, body: 'forbidden' }));
      const servers = { local: fixtureServer(), refused: { type: 'http', url: refused.url }, forbidden: { type: 'http', url: forbidden.url } };
      const wb = await startEra('stdio', era, { toolboxes: { day: { mcpServers: servers } } });
      try {
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'day', detail: 'full' } })) as CallToolResult;
        const failed = (opened.structuredContent as { servers_failed: FailedEntry[] }).servers_failed;
        for (const [server, status] of [['refused', 401], ['forbidden', 403]] as const) {
          const entry = failed.find((f) => f.server === server);
          assert.ok(entry, JSON.stringify(failed));
          assert.deepEqual([entry.code, entry.retryable, entry.failure], ['CONNECT_FAILED', false, { kind: 'http-status', httpStatus: status }], entry.error);
          assert.match(entry.hint ?? '', /credentials/, entry.error);
          // The cause is a sentence of its own (it once ran on: "(HTTP 401) Check…"); what to do is in `hint` alone.
          if (server === 'refused') {
            const url = `http://127.0.0.1:${new URL(refused.url).port}/mcp`;
            assert.equal(entry.error, `server "refused" of toolbox "day" at ${url} could not be connected: Version negotiation failed: the server requires authorization (HTTP 401).`);
          }
          // The same on a call by full name, as for a call the server refused with that status.
          const call = { toolbox_name: 'day', tool_name: `day__${server}__echo`, arguments: {} };
          const result = (await wb.client.callTool({ name: 'use_tool', arguments: call })) as CallToolResult;
          const error = result._meta?.['mcp-workbench/error'] as { code?: string; retryable?: boolean };
          assert.deepEqual([error.code, error.retryable], ['CONNECT_FAILED', false], textOf(result));
          assert.match(textOf(result), /\(HTTP 40[13]\)\. Check the credentials/);
        }
      } finally {
        await wb.close();
        for (const s of [refused, forbidden]) {
          s.server.closeAllConnections();
          s.server.close();
        }
      }
    });

    it(`an OAuth server whose url names \${user:…} is refused, not signed in to once for every user's endpoint (${era} client)`, async () => {
      // Any path answers 401 with a Bearer challenge (each user's own endpoint asks for a sign-in).
      const everyPath = await answering(() => ({ status: 401, headers: { 'www-authenticate': 'Bearer realm="mcp"' }, body: 'unauthorized' }));
      const url = `http://127.0.0.1:${new URL(everyPath.url).port}/\${user:id}/mcp`;
      const servers = { local: fixtureServer(), signed: { type: 'http', url, auth: { clientId: 'wb' } }, challenged: { type: 'http', url } };
      const wb = await startEra('stdio', era, { toolboxes: { day: { mcpServers: servers } } });
      try {
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'day', detail: 'full' } })) as CallToolResult;
        const body = opened.structuredContent as { servers_connected: string[]; servers_failed: FailedEntry[] };
        assert.deepEqual(body.servers_connected, ['local'], textOf(opened));
        const signed = body.servers_failed.find((f) => f.server === 'signed');
        assert.ok(signed, JSON.stringify(body.servers_failed));
        assert.deepEqual([signed.code, signed.retryable, signed.failure?.kind], ['CONFIG_INVALID', false, 'misconfigured'], signed.error);
        assert.match(signed.error, /toolboxes\.day\.mcpServers\.signed\.url: names \$\{user:…\}/);
        // A config entry's fix is said once, in its problem (README "Errors").
        const problems = (signed.failure as { problems?: { fix: string }[] } | undefined)?.problems ?? [];
        assert.match(problems.map((p) => p.fix).join('\n'), /run a workbench per user/, JSON.stringify(signed));
        const challenged = body.servers_failed.find((f) => f.server === 'challenged');
        assert.ok(challenged, JSON.stringify(body.servers_failed));
        assert.deepEqual([challenged.code, challenged.retryable], ['SIGN_IN_FAILED', false], challenged.error);
        assert.match(challenged.error, /asks for an OAuth sign-in, but its "url" names \$\{user:…\}/);
        assert.match(challenged.hint ?? '', /run a workbench per user/);
      } finally {
        await wb.close();
        everyPath.server.closeAllConnections();
        everyPath.server.close();
      }
    });

    it(`a 401 Bearer challenge whose sign-in cannot start is SIGN_IN_FAILED, naming the 401 and what to set (${era} client)`, async () => {
      const config = { toolboxes: { day: { mcpServers: { local: fixtureServer(), locked: { type: 'http', url: bearerOnly.url } } } } };
      const wb = await startEra('stdio', era, config);
      try {
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'day', detail: 'full' } })) as CallToolResult;
        const body = opened.structuredContent as { servers_connected: string[]; servers_failed: FailedEntry[] };
        assert.deepEqual(body.servers_connected, ['local'], textOf(opened));
        const entry = body.servers_failed.find((f) => f.server === 'locked');
        assert.ok(entry, JSON.stringify(body.servers_failed));
        assert.equal(entry.code, 'SIGN_IN_FAILED', entry.error);
        assert.equal(entry.retryable, false);
        assert.deepEqual(entry.failure, { kind: 'http-status', httpStatus: 401 });
        assert.match(entry.error, /server "locked" of toolbox "day" at http:\/\/127\.0\.0\.1:\d+\/mcp answered 401 and asks for an OAuth sign-in/);
        assert.match(entry.error, /registration/i);
        assert.match(entry.hint ?? '', /"headers"/);
        assert.match(entry.hint ?? '', /"clientId"/);
        assert.ok(!entry.error.includes('not here'), `no raw response body: ${entry.error}`);
      } finally {
        await wb.close();
      }
    });
  }
});
