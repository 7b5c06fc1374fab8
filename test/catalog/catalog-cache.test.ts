import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CACHE_MEMO_ENTRIES, CatalogCache, catalogCacheDir, catalogKey, cacheKey } from '../../src/catalog/catalog-cache.js';
import type { StdioServerConfig } from '../../src/config/types.js';
import { createLogger } from '../../src/log.js';
import { tempDir } from '../helpers/workbench-process.js';

const server = (env: Record<string, string>): StdioServerConfig => ({
  name: 'gh',
  type: 'stdio',
  command: 'node',
  args: ['server.js'],
  env,
  inheritEnv: false,
  disabledTools: [],
  shared: false,
});

describe('catalog cache', () => {
  it('lives under MCP_WORKBENCH_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache', () => {
    assert.equal(catalogCacheDir({ MCP_WORKBENCH_CACHE_DIR: '/c', XDG_CACHE_HOME: '/x' }, '/home/a'), '/c');
    assert.equal(catalogCacheDir({ XDG_CACHE_HOME: '/x' }, '/home/a'), join('/x', 'mcp-workbench'));
    assert.equal(catalogCacheDir({}, '/home/a'), join('/home/a', '.cache', 'mcp-workbench'));
  });

  it('keys by toolbox, server and launch config, with env names but not values', () => {
    assert.equal(cacheKey('dev', server({ TOKEN: 'a' })), cacheKey('dev', server({ TOKEN: 'b' })));
    assert.notEqual(cacheKey('dev', server({ TOKEN: 'a' })), cacheKey('dev', server({ OTHER: 'a' })));
    assert.notEqual(cacheKey('dev', server({})), cacheKey('dev', { ...server({}), args: ['other.js'] }));
    assert.notEqual(cacheKey('dev', server({})), cacheKey('ops', server({})));
  });

  it('keys tool lists by credentials (hashed) and client capabilities, not by other env values', () => {
    assert.equal(catalogKey('dev', server({ TOKEN: 'a', DIR: '/x' }), '{}'), catalogKey('dev', server({ TOKEN: 'a', DIR: '/y' }), '{}'));
    assert.notEqual(catalogKey('dev', server({ TOKEN: 'a' }), '{}'), catalogKey('dev', server({ TOKEN: 'b' }), '{}'));
    assert.notEqual(catalogKey('dev', server({ TOKEN: 'a' }), '{}'), catalogKey('dev', server({ TOKEN: 'a' }), '{"sampling":{}}'));
  });

  it('keys tool lists by the values of env entries holding a ${secret:NAME}, whatever their names (README "Catalog cache")', () => {
    const holding = (mode: string): StdioServerConfig => ({ ...server({ MODE: mode }), secretEntries: ['MODE'] });
    assert.notEqual(catalogKey('dev', holding('secret-a'), '{}'), catalogKey('dev', holding('secret-b'), '{}'));
    assert.equal(catalogKey('dev', server({ MODE: 'secret-a' }), '{}'), catalogKey('dev', server({ MODE: 'secret-b' }), '{}'));
  });

  it('keys tool lists by values that hold credentials under harmless names (URL user info, PAT, DSN, connection strings), never by others', () => {
    const differ = (env: (who: string) => Record<string, string>): void =>
      assert.notEqual(catalogKey('dev', server(env('alice')), '{}'), catalogKey('dev', server(env('bob')), '{}'), JSON.stringify(env('alice')));
    differ((who) => ({ DATABASE_URL: `postgres://${who}:pw@db/x` }));
    differ((who) => ({ MONGODB_URI: `mongodb+srv://${who}:pw@cluster0.example.net/app` }));
    differ((who) => ({ REDIS_URL: `redis://:${who}-pw@cache:6379` }));
    differ((who) => ({ SENTRY_DSN: `https://${who}key@o1.ingest.sentry.io/1` }));
    differ((who) => ({ GH_PAT: `ghp_${who}0123456789` }));
    differ((who) => ({ CONNECTION_STRING: `Server=db;User Id=app;Password=${who}-pw;` }));
    differ((who) => ({ UPSTREAM: `Bearer ${who}-0123456789` }));
    assert.equal(catalogKey('dev', server({ BASE_URL: 'https://a.example/x' }), '{}'), catalogKey('dev', server({ BASE_URL: 'https://b.example/y' }), '{}'));
    const remote = (url: string) => ({ name: 'r', type: 'http' as const, url: 'https://mcp.example/mcp', headers: { 'X-Upstream': url }, disabledTools: [], shared: false });
    assert.notEqual(catalogKey('dev', remote('https://alice:pw@up'), '{}'), catalogKey('dev', remote('https://bob:pw@up'), '{}'));
  });

  it("keys an inheritEnv server's lists by the credentials it inherits, not by the rest of the environment", () => {
    const inheriting: StdioServerConfig = { ...server({}), inheritEnv: true };
    const base = { PWD: '/home/a', SHLVL: '1', HOME: '/home/a', SSH_AUTH_SOCK: '/tmp/ssh-1/agent', XDG_SESSION_ID: '3', OPENAI_API_KEY: 'sk-alice' };
    const key = (env: Record<string, string>, config = inheriting): string => catalogKey('dev', config, '{}', env);
    assert.notEqual(key(base), key({ ...base, OPENAI_API_KEY: 'sk-bob' }));
    assert.notEqual(key(base), key({ ...base, DATABASE_URL: 'postgres://alice:pw@db/x' }));
    assert.equal(key(base), key({ ...base, PWD: '/tmp', SHLVL: '3', HOME: '/root', SSH_AUTH_SOCK: '/tmp/ssh-2/agent', XDG_SESSION_ID: '9', EDITOR: 'vi' }));
    assert.equal(key(base, server({})), key({ ...base, OPENAI_API_KEY: 'sk-bob' }, server({})), 'a server that inherits nothing: not keyed by the workbench env');
    assert.equal(key({ PWD: '/x' }), catalogKey('dev', inheriting, '{}'), 'nothing inherited to key: the key as before');
  });

  it('writes tools without secrets, reads them back under the same credentials and capabilities only, and ignores a corrupt file', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const log = createLogger({ level: 'error', write: () => {} });
      const cache = new CatalogCache(dir, log);
      const tools = [{ name: 'echo', inputSchema: { type: 'object' as const } }];
      await cache.write('dev', server({ TOKEN: 'secret-value' }), '{}', tools, 0);
      const [file] = await readdir(dir);
      const text = await readFile(join(dir, file!), 'utf8');
      assert.ok(!text.includes('secret-value') && !text.includes('server.js'));
      const again = await new CatalogCache(dir, log).read('dev', server({ TOKEN: 'secret-value' }), '{}');
      assert.deepEqual(again?.tools, tools);
      assert.equal(again?.freshUntil, undefined, 'ttlMs 0: never fresh, always checked');
      assert.equal(await new CatalogCache(dir, log).read('dev', server({ TOKEN: 'other' }), '{}'), undefined);
      assert.equal(await new CatalogCache(dir, log).read('dev', server({ TOKEN: 'secret-value' }), '{"sampling":{}}'), undefined);
      assert.equal(await new CatalogCache(dir, log).read('dev', { ...server({ TOKEN: 'secret-value' }), catalogCache: false }, '{}'), undefined);
      await writeFile(join(dir, file!), '{ not json');
      assert.equal(await new CatalogCache(dir, log).read('dev', server({ TOKEN: 'secret-value' }), '{}'), undefined);
    } finally {
      await cleanup();
    }
  });

  it('keeps its directory 0700 and files 0600', { skip: process.platform === 'win32' }, async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const cache = new CatalogCache(join(dir, 'c'), createLogger({ level: 'error', write: () => {} }));
      await cache.write('dev', server({}), '{}', [{ name: 'echo', inputSchema: { type: 'object' as const } }], 60_000);
      assert.equal((await stat(join(dir, 'c'))).mode & 0o777, 0o700);
      const [file] = await readdir(join(dir, 'c'));
      assert.equal((await stat(join(dir, 'c', file!))).mode & 0o777, 0o600);
    } finally {
      await cleanup();
    }
  });

  it('keeps prompt lists in files of their own under the same key, with the same freshness and credentials rules', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const log = createLogger({ level: 'error', write: () => {} });
      const cache = new CatalogCache(dir, log);
      const tools = [{ name: 'echo', inputSchema: { type: 'object' as const } }];
      const prompts = [{ name: 'greet', arguments: [{ name: 'who', required: true }] }];
      await cache.write('dev', server({ TOKEN: 'a' }), '{}', tools, 0);
      await cache.writePrompts('dev', server({ TOKEN: 'a' }), '{}', prompts, 30_000);
      assert.equal((await readdir(dir)).length, 2, 'tools and prompts in two files');
      const again = new CatalogCache(dir, log);
      assert.deepEqual((await again.read('dev', server({ TOKEN: 'a' }), '{}'))?.tools, tools);
      const read = await again.readPrompts('dev', server({ TOKEN: 'a' }), '{}');
      assert.deepEqual(read?.prompts, prompts);
      assert.ok(read?.freshUntil !== undefined && read.freshUntil > read.listedAt, 'a positive ttlMs: fresh until then');
      assert.equal(await again.readPrompts('dev', server({ TOKEN: 'b' }), '{}'), undefined, 'other credentials: not reused');
      assert.equal(await again.readPrompts('dev', { ...server({ TOKEN: 'a' }), catalogCache: false }, '{}'), undefined);
    } finally {
      await cleanup();
    }
  });

  // A long-running --http workbench meets new keys with every config edit and every new user: what one process keeps
  // in memory is bounded, and a list it let go is read from its file again (here: the newer one another process wrote).
  it('keeps a bounded number of lists in memory, and reads one it let go from its file again', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const log = createLogger({ level: 'error', write: () => {} });
      const mine = new CatalogCache(dir, log);
      const tools = (name: string) => [{ name, inputSchema: { type: 'object' as const } }];
      const entry = (i: number): StdioServerConfig => ({ ...server({}), name: `s${i}` });
      await mine.write('dev', entry(0), '{}', tools('mine'), 0);
      await new CatalogCache(dir, log).write('dev', entry(0), '{}', tools('theirs'), 0);
      assert.deepEqual((await mine.read('dev', entry(0), '{}'))?.tools, tools('mine'), 'what this process wrote last is kept in memory');
      for (let i = 1; i <= CACHE_MEMO_ENTRIES; i++) await mine.write('dev', entry(i), '{}', tools(`t${i}`), 0);
      assert.deepEqual((await mine.read('dev', entry(0), '{}'))?.tools, tools('theirs'), 'let go from memory: read from its file');
      assert.deepEqual((await mine.read('dev', entry(CACHE_MEMO_ENTRIES), '{}'))?.tools, tools(`t${CACHE_MEMO_ENTRIES}`));
    } finally {
      await cleanup();
    }
  });
});
