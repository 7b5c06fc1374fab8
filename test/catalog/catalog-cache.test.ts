import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CatalogCache, catalogCacheDir, cacheKey } from '../../src/catalog/catalog-cache.js';
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

  it('writes tools without secrets, reads them back, and ignores a corrupt file', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const log = createLogger({ level: 'error', write: () => {} });
      const cache = new CatalogCache(dir, log);
      const tools = [{ name: 'echo', inputSchema: { type: 'object' as const } }];
      await cache.write('dev', server({ TOKEN: 'secret-value' }), tools);
      const [file] = await readdir(dir);
      const text = await readFile(join(dir, file!), 'utf8');
      assert.ok(!text.includes('secret-value') && !text.includes('server.js'));
      assert.deepEqual(await new CatalogCache(dir, log).read('dev', server({ TOKEN: 'other' })), tools);
      await writeFile(join(dir, file!), '{ not json');
      assert.equal(await new CatalogCache(dir, log).read('dev', server({})), undefined);
    } finally {
      await cleanup();
    }
  });
});
