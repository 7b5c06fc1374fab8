import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/log.js';
import { FileSecretStore, parseSecretsFile } from '../../src/secrets/file-store.js';
import { probeKeychain } from '../../src/secrets/keychain-store.js';
import { openSecretStore } from '../../src/secrets/secret-store.js';
import { resolveSecretsPath } from '../../src/secrets/secrets-path.js';
import { tempDir } from '../helpers/workbench-process.js';

const log = createLogger({ level: 'error' });
/** POSIX modes exist (Windows has none to check). */
const posix = process.platform !== 'win32';

describe('secret file path', () => {
  it('is MCP_WORKBENCH_SECRETS_FILE (~ expanded, relative to cwd), else ~/.mcp-workbench/secrets.json', () => {
    assert.deepEqual(resolveSecretsPath({ env: {}, homedir: '/home/ada', cwd: '/w' }), { path: join('/home/ada', '.mcp-workbench', 'secrets.json'), isDefault: true });
    assert.deepEqual(resolveSecretsPath({ env: { MCP_WORKBENCH_SECRETS_FILE: '  ' }, homedir: '/home/ada', cwd: '/w' }).isDefault, true);
    assert.equal(resolveSecretsPath({ env: { MCP_WORKBENCH_SECRETS_FILE: '~/s.json' }, homedir: '/home/ada', cwd: '/w' }).path, join('/home/ada', 's.json'));
    assert.equal(resolveSecretsPath({ env: { MCP_WORKBENCH_SECRETS_FILE: 'x/s.json' }, homedir: '/home/ada', cwd: '/w' }).path, join('/w', 'x', 's.json'));
  });
});

describe('file secret store', () => {
  it('creates the file 0600 in a new directory 0700, sorted, and reads back what it wrote', async () => {
    const { dir, cleanup } = await tempDir('wb-secrets-');
    try {
      const path = join(dir, 'nested', 'secrets.json');
      const store = new FileSecretStore(path, { log, ownDirectory: false });
      assert.deepEqual(await store.read(), { secrets: new Map() });
      await store.set('zeta', 'value-z');
      await store.set('alpha', 'value-a');
      const read = await store.read();
      assert.ok('secrets' in read);
      assert.deepEqual([...read.secrets], [['alpha', 'value-a'], ['zeta', 'value-z']]);
      assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { format: 1, secrets: { alpha: 'value-a', zeta: 'value-z' } });
      if (posix) {
        assert.equal((await stat(path)).mode & 0o777, 0o600);
        assert.equal((await stat(join(dir, 'nested'))).mode & 0o777, 0o700);
      }
      assert.equal(await store.remove('alpha'), true);
      assert.equal(await store.remove('alpha'), false);
    } finally {
      await cleanup();
    }
  });

  it('tightens a looser file to 0600 on write, and its own directory to 0700', { skip: !posix && 'no POSIX modes on this platform' }, async () => {
    const { dir, cleanup } = await tempDir('wb-secrets-');
    try {
      const own = join(dir, 'own');
      await mkdir(own, { mode: 0o755 });
      await chmod(own, 0o755);
      const path = join(own, 'secrets.json');
      await writeFile(path, JSON.stringify({ format: 1, secrets: {} }), { mode: 0o644 });
      await chmod(path, 0o644);
      await new FileSecretStore(path, { log, ownDirectory: true }).set('a', 'value-a');
      assert.equal((await stat(path)).mode & 0o777, 0o600);
      assert.equal((await stat(own)).mode & 0o777, 0o700);
    } finally {
      await cleanup();
    }
  });

  it('keeps every change of concurrent writers (they take the lock in turn)', async () => {
    const { dir, cleanup } = await tempDir('wb-secrets-');
    try {
      const path = join(dir, 'secrets.json');
      const names = Array.from({ length: 8 }, (_, i) => `name${i}`);
      await Promise.all(names.map((name) => new FileSecretStore(path, { log, ownDirectory: false }).set(name, `value-${name}`)));
      const read = await new FileSecretStore(path, { log, ownDirectory: false }).read();
      assert.ok('secrets' in read);
      assert.deepEqual([...read.secrets.keys()].sort(), names);
    } finally {
      await cleanup();
    }
  });

  it('keeps keys the user added and a byte-order mark on every change, and says so', async () => {
    const { dir, cleanup } = await tempDir('wb-secrets-');
    try {
      const path = join(dir, 'secrets.json');
      await writeFile(path, `\uFEFF${JSON.stringify({ format: 1, secrets: { a: 'value-a' }, notes: { a: 'rotated in May' } })}`);
      const lines: string[] = [];
      const store = new FileSecretStore(path, { log: createLogger({ level: 'warn', write: (line) => void lines.push(line) }), ownDirectory: false });
      await store.set('b', 'value-b');
      await store.remove('a');
      const text = await readFile(path, 'utf8');
      assert.ok(text.startsWith('\uFEFF'), 'the BOM stays');
      assert.deepEqual(JSON.parse(text.slice(1)), { format: 1, secrets: { b: 'value-b' }, notes: { a: 'rotated in May' } });
      assert.match(lines.join(''), /has keys the workbench does not use \(notes\); they were kept as they are/);
    } finally {
      await cleanup();
    }
  });

  it('never writes over a file it cannot parse, and says why', async () => {
    const { dir, cleanup } = await tempDir('wb-secrets-');
    try {
      const path = join(dir, 'secrets.json');
      await writeFile(path, '{ not json');
      const store = new FileSecretStore(path, { log, ownDirectory: false });
      const read = await store.read();
      assert.ok('problem' in read && /not valid JSON/.test(read.problem));
      await assert.rejects(store.set('a', 'value-a'), (error: Error & { code?: string }) => error.code === 'SECRET_STORE_FAILED' && /left as it is/.test(error.message));
      assert.equal(await readFile(path, 'utf8'), '{ not json');
    } finally {
      await cleanup();
    }
  });

  it('checks the shape and every name of a file', () => {
    assert.match((parseSecretsFile('[]') as { problem: string }).problem, /not a JSON object/);
    assert.match((parseSecretsFile('{"format":2,"secrets":{}}') as { problem: string }).problem, /format 2/);
    assert.match((parseSecretsFile('{"format":1,"secrets":{"__proto__":"x"}}') as { problem: string }).problem, /invalid secret name/);
    assert.match((parseSecretsFile('{"format":1,"secrets":{"a":1}}') as { problem: string }).problem, /not a string/);
  });
});

describe('choosing the store', () => {
  it('finds no keychain on Linux without a D-Bus session bus, without asking anything', { skip: process.platform !== 'linux' && 'Linux only' }, async () => {
    const probe = await probeKeychain({ env: {}, platform: 'linux' });
    assert.equal(probe.usable, false);
    assert.match(probe.usable ? '' : probe.reason, /D-Bus/);
  });

  it('uses the file when told to, or in auto mode when no keychain is usable; refuses an unknown mode and an unusable keychain', async () => {
    const { dir, cleanup } = await tempDir('wb-secrets-');
    try {
      const env = { MCP_WORKBENCH_SECRETS_FILE: join(dir, 'secrets.json') };
      const options = { homedir: dir, cwd: dir, platform: 'linux' as const, log };
      const file = await openSecretStore({ ...options, env: { ...env, MCP_WORKBENCH_SECRET_STORE: 'file' } });
      assert.equal(file.kind, 'file');
      assert.equal(await file.set('github', 'value-github'), 'file');
      // Linux without a session bus: the probe answers at once, so auto means the file.
      const auto = await openSecretStore({ ...options, env });
      assert.equal(auto.kind, 'file');
      assert.match(auto.choice, /no OS keychain/);
      assert.deepEqual(await auto.list(), [{ name: 'github', store: 'file' }]);
      const source = await auto.source();
      assert.equal(source.get('github'), 'value-github');
      assert.equal(source.get('other'), undefined);
      await assert.rejects(openSecretStore({ ...options, env: { ...env, MCP_WORKBENCH_SECRET_STORE: 'keychain' } }), /no OS keychain is usable here/);
      await assert.rejects(openSecretStore({ ...options, env: { ...env, MCP_WORKBENCH_SECRET_STORE: 'vault' } }), /auto \(the default\), file or keychain/);
    } finally {
      await cleanup();
    }
  });

  it('gives an unreadable file as the problem of the source, never as an error', async () => {
    const { dir, cleanup } = await tempDir('wb-secrets-');
    try {
      const path = join(dir, 'secrets.json');
      await writeFile(path, 'garbage');
      const store = await openSecretStore({ env: { MCP_WORKBENCH_SECRETS_FILE: path, MCP_WORKBENCH_SECRET_STORE: 'file' }, homedir: dir, cwd: dir, platform: 'linux', log });
      const source = await store.source();
      assert.match(source.problem ?? '', /not valid JSON/);
    } finally {
      await cleanup();
    }
  });
});
