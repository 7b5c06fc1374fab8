import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../src/config/load.js';
import { Scopes } from '../../src/core/scopes.js';
import type { UpstreamSession } from '../../src/core/session-routing.js';
import { isWorkbenchError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { fixtureServer, node, waitFor } from '../helpers/workbench-process.js';

// A request of a session that has just closed (its DELETE, idle expiry or shutdown raced the request, or a call that
// awaited something — a toolset's routing — looks its session up again) used to be answered from the root scope:
// the stdio/CLI user's connections (user `local`, its `${user:dir}`), never this session's. Unit level: over HTTP the
// transport answers such a request 404 first, and the race the call path can hit is not one a test can pace.

// No entry here names `${user:dir}`: no user's folder is ever made, so none is given a real place.
const usersDir = '/nonexistent/wb-scopes-test-users';

const upstream: UpstreamSession = {
  capabilities: () => ({}),
  request: () => Promise.reject(new Error('no client in this test')),
  log: () => {},
};

function scopes(): Scopes {
  const config = parseConfig({ toolboxes: { fx: { mcpServers: { f: fixtureServer() } } } }, 'scopes.test', {});
  return new Scopes({ config, env: {}, log: createLogger({ level: 'error', write: () => {} }), version: '0', usersDir, onToolsChanged: () => {} });
}

describe('Scopes.of: a session that has closed', () => {
  it('is still its own scope, whose closed connections refuse (naming what to do), never the root', async () => {
    const all = scopes();
    const session = all.open(upstream, { isolated: true, principal: 'alice' });
    assert.equal(all.of(session), session, 'an open session is its own scope');
    assert.equal(all.of(undefined), all.root, 'no session: the workbench\'s own');
    await session.close();
    const late = all.of(session);
    assert.notEqual(late, all.root, 'a closed session is never served from the root (the stdio user\'s connections)');
    assert.equal(late, session);
    await assert.rejects(
      late.manager.connectServer('fx', 'f'),
      (error: unknown) => isWorkbenchError(error, 'SHUTTING_DOWN') && /new session/.test(error.message),
    );
    assert.equal(all.root.manager.isConnected('fx', 'f'), false, 'nothing was started for it in the root');
    await all.close();
  });

  it('a stdio session is the root scope (the workbench\'s own user), open or closed', async () => {
    const all = scopes();
    const session = all.open(upstream, { isolated: false });
    assert.equal(all.of(session), all.root);
    await session.close();
    assert.equal(all.of(session), all.root);
    await all.close();
  });
});

// README "Serving over HTTP": a shared server whose list is private gives every session that had not used it a
// connection of its own. Such a session used to be told of the shared connection's tool changes as well (its
// catalogs dropped, its own server's failure forgotten, lists re-announced): a change it does not use.
describe('Scopes: a tool change of a shared connection', () => {
  it('reaches the sessions that use that connection, not one with a connection of its own', async () => {
    const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
    const config = parseConfig({ toolboxes: { dev: { mcpServers: { mod: { command: node, args: [modern, '--private', '--ttl-ms', '0'], shared: true } } } } }, 'scopes.test', {});
    const told: { scope: unknown; server: string }[] = [];
    const all = new Scopes({ config, env: {}, log: createLogger({ level: 'error', write: () => {} }), version: '0', usersDir, onToolsChanged: (scope, _toolbox, server) => void told.push({ scope, server }) });
    try {
      const alice = all.open(upstream, { isolated: true, principal: 'alice' });
      assert.deepEqual((await alice.manager.openToolbox('dev')).failed, []);
      const bob = all.open(upstream, { isolated: true, principal: 'bob' });
      assert.deepEqual((await bob.manager.openToolbox('dev')).failed, []);
      assert.equal(bob.manager.ownsSlot('dev', 'mod'), true, 'the list is private: Bob has a connection of his own');
      assert.equal(alice.manager.ownsSlot('dev', 'mod'), false);
      told.length = 0;
      const grown = await alice.manager.callTool('dev', 'mod', 'grow', {});
      assert.notEqual(grown.isError, true, JSON.stringify(grown));
      assert.ok(await waitFor(() => told.some((t) => t.scope === alice), 10_000), 'Alice, who uses the shared connection, is told');
      assert.ok(!told.some((t) => t.scope === bob), 'Bob, with a connection of his own, is not');
    } finally {
      await all.close();
    }
  });
});
