import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CatalogCache, catalogCacheDir, catalogKey, cacheKey } from '../../src/catalog/catalog-cache.js';
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
});
