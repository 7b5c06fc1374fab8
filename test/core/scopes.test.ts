import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { Scopes } from '../../src/core/scopes.js';
import type { UpstreamSession } from '../../src/core/session-routing.js';
import { isWorkbenchError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { fixtureServer } from '../helpers/workbench-process.js';

// A request of a session that has just closed (its DELETE, idle expiry or shutdown raced the request, or a call that
// awaited something — a toolset's routing — looks its session up again) used to be answered from the root scope:
// the stdio/CLI user's connections (user `local`, its `${user:dir}`), never this session's. Unit level: over HTTP the
// transport answers such a request 404 first, and the race the call path can hit is not one a test can pace.

const upstream: UpstreamSession = {
  capabilities: () => ({}),
  request: () => Promise.reject(new Error('no client in this test')),
  log: () => {},
};

function scopes(): Scopes {
  const config = parseConfig({ toolboxes: { fx: { mcpServers: { f: fixtureServer() } } } }, 'scopes.test', {});
  return new Scopes({ config, env: {}, log: createLogger({ level: 'error', write: () => {} }), version: '0', onToolsChanged: () => {} });
}

describe('Scopes.of: a session that has closed', () => {
  it('is refused, naming what happened and what to do, instead of answered from the root scope', async () => {
    const all = scopes();
    const session = all.open(upstream, { isolated: true, principal: 'alice' });
    assert.equal(all.of(session), session, 'an open session is its own scope');
    assert.equal(all.of(undefined), all.root, 'no session: the workbench\'s own');
    await session.close();
    assert.throws(
      () => all.of(session),
      (error: unknown) => isWorkbenchError(error, 'SHUTTING_DOWN') && /session has closed/.test(error.message) && /new session/.test(error.message),
    );
    await all.close();
  });

  it('a stdio session is the root scope while open, and refused once closed', async () => {
    const all = scopes();
    const session = all.open(upstream, { isolated: false });
    assert.equal(all.of(session), all.root);
    await session.close();
    assert.throws(() => all.of(session), (error: unknown) => isWorkbenchError(error, 'SHUTTING_DOWN'));
    await all.close();
  });
});

