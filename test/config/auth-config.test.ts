import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import type { RemoteServerConfig } from '../../src/config/types.js';
import { createRedactor } from '../../src/shared/redact.js';
import { failure } from '../helpers/expect-error.js';

const SOURCE = '/cfg/workbench-config.json';

function withServer(server: Record<string, unknown>): unknown {
  return { toolboxes: { dev: { mcpServers: { remote: server } } } };
}

function remote(server: Record<string, unknown>, env: Record<string, string> = {}): RemoteServerConfig {
  const config = parseConfig(withServer(server), SOURCE, env);
  const found = config.toolboxes[0]!.servers[0]!;
  assert.notEqual(found.type, 'stdio');
  return found as RemoteServerConfig;
}

function problems(server: Record<string, unknown>): readonly string[] {
  return failure(() => parseConfig(withServer(server), SOURCE, {}), 'CONFIG_INVALID').details;
}

describe('config: auth on remote servers', () => {
  it('"oauth" is the authorization-code flow with the defaults', () => {
    assert.deepEqual(remote({ type: 'http', url: 'https://mcp.example.test/mcp', auth: 'oauth' }).auth, { grantType: 'authorization_code' });
  });

  it('the object form keeps its fields, expands ${VAR} in them and hides the credentials', () => {
    const server = remote(
      {
        type: 'http',
        url: 'https://mcp.example.test/mcp',
        auth: { clientId: 'wb', clientSecret: '${CLIENT_SECRET}', scopes: ['read', '${EXTRA_SCOPE}'], redirectPort: 8765 },
      },
      { CLIENT_SECRET: 'very-secret-value', EXTRA_SCOPE: 'write' },
    );
    assert.deepEqual(server.auth, { clientId: 'wb', clientSecret: 'very-secret-value', scopes: ['read', 'write'], redirectPort: 8765, grantType: 'authorization_code' });
    const config = parseConfig(withServer({ type: 'http', url: 'https://x.test/mcp', auth: { clientId: 'wb', clientSecret: 'literal-secret-1' } }), SOURCE, {});
    assert.equal(createRedactor(config.secrets)('sent literal-secret-1'), 'sent [redacted: auth clientSecret]');
  });

  it('an unset variable in auth fails only that server, named with its path', () => {
    const config = parseConfig(withServer({ type: 'http', url: 'https://x.test/mcp', auth: { clientId: '${NOPE}' } }), SOURCE, {});
    const problem = config.toolboxes[0]!.servers[0]!.problems?.[0];
    assert.equal(problem?.kind, 'env-missing');
    assert.equal(problem?.path, 'toolboxes.dev.mcpServers.remote.auth.clientId');
  });

  it('refuses auth on a stdio server, unknown keys (with a suggestion) and values other than "oauth"', () => {
    assert.ok(problems({ command: 'node', auth: 'oauth' }).some((p) => p.includes('"auth" applies only to http/sse servers')), 'stdio');
    assert.ok(problems({ type: 'http', url: 'https://x.test/mcp', auth: { clientID: 'x' } }).some((p) => p.includes('did you mean "clientId"')));
    assert.ok(problems({ type: 'http', url: 'https://x.test/mcp', auth: 'basic' }).some((p) => p.includes('must be one of "oauth"')));
  });

  it('hides OAuth token fields in any text, JSON or form encoded', () => {
    const redact = createRedactor([]);
    assert.equal(redact('{"access_token":"at-12345678","token_type":"Bearer"}'), '{"access_token":"[redacted: access_token]","token_type":"Bearer"}');
    assert.equal(redact('grant_type=refresh_token&refresh_token=rt-abcdef12&client_id=x'), 'grant_type=refresh_token&refresh_token=[redacted: refresh_token]&client_id=x');
  });

  it('checks what each grant needs', () => {
    const cc = problems({ type: 'http', url: 'https://x.test/mcp', auth: { grantType: 'client_credentials' } });
    assert.ok(cc.some((p) => p.includes('needs "clientId"')));
    assert.ok(cc.some((p) => p.includes('needs "clientSecret" (client_secret_basic) or "privateKeyPem"')));
    const jwt = problems({ type: 'http', url: 'https://x.test/mcp', auth: { grantType: 'jwt_bearer' } });
    assert.ok(jwt.some((p) => p.includes('needs "assertion"')));
    const misplaced = problems({ type: 'http', url: 'https://x.test/mcp', auth: { privateKeyPem: 'k' } });
    assert.ok(misplaced.some((p) => p.includes('"privateKeyPem" applies only to "grantType": "client_credentials"')));
  });
});
