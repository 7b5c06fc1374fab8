import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSecretName } from '../../src/config/secret-source.js';
import { moveLiteralSecrets } from '../../src/migrate/store-secrets.js';

describe('moveLiteralSecrets (migrate --secrets store)', () => {
  it('replaces literal credentials by ${secret:NAME} with valid, unique names, and leaves references and other values alone', () => {
    const entry = { command: 'x', env: { 'MY TOKEN': 'value-1', 'MY#TOKEN': 'value-2', API_KEY: '${API_KEY}', MODE: 'plain' } };
    const input: [string, Record<string, unknown>][] = [['9srv', entry]];
    const { servers, moved, notes } = moveLiteralSecrets('1box', input);
    assert.deepEqual(moved.map((m) => [m.name, m.value]), [
      ['s1box.9srv.MY_TOKEN', 'value-1'],
      ['s1box.9srv.MY_TOKEN-2', 'value-2'],
    ]);
    assert.ok(moved.every((m) => isSecretName(m.name)));
    assert.deepEqual(servers[0]![1].env, { 'MY TOKEN': '${secret:s1box.9srv.MY_TOKEN}', 'MY#TOKEN': '${secret:s1box.9srv.MY_TOKEN-2}', API_KEY: '${API_KEY}', MODE: 'plain' });
    assert.equal(entry.env['MY TOKEN'], 'value-1', 'the input is not modified');
    assert.ok(!notes.join('\n').includes('value-'));
  });

  it('keeps names within 64 characters', () => {
    const { moved } = moveLiteralSecrets('t'.repeat(40), [['s'.repeat(40), { url: 'https://h.test', headers: { Authorization: 'Bearer value-3' } }]]);
    assert.equal(moved[0]!.name.length, 64);
    assert.ok(isSecretName(moved[0]!.name));
  });
});
