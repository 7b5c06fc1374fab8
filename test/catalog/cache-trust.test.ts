import assert from 'node:assert/strict';
import { chmod, chown, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, type EraName } from '../helpers/era-workbench.js';
import { fixtureServer, node, tempDir, textOf } from '../helpers/workbench-process.js';

// README "Catalog cache": only the user's own cache is trusted. A directory others may write to (or another user's)
// is never read or written, and never chmod-ed (MCP_WORKBENCH_CACHE_DIR may be /tmp); a file another user owns is
// ignored; a file's freshness counts for no more than 24 hours past its listing (README "Caching hints"), and a
// listing in the future is not used. A file that cannot be read, or holds something else than a list, is ignored with
// one warning naming it and what to do. Each case fills a cache with one workbench, changes it, and opens the toolbox
// with a second: a trusted list answers at once (`servers_cached`); an ignored one is connected live instead.

const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const isRoot = process.getuid?.() === 0;
const HOUR = 60 * 60 * 1000;
const config = { toolboxes: { dev: { mcpServers: { leg: fixtureServer(), mod: { command: node, args: [modern, '--ttl-ms', '600000'] } } } } };

interface Opened {
  cached: Map<string, { state: string; age: string }>;
  connected: string[];
  stderr: string;
}

const OPEN = { toolbox_name: 'dev' };
const SEARCH = { toolbox_name: 'dev', query: 'echo' };

/**
 * One workbench on `cacheDir`: opens the toolbox and searches it (the second reads what the first left), then ends;
 * answers what the first call said. A search first (`searchFirst`) starts no cached server, so what it shows from the
 * cache does not depend on how fast the others connect.
 */
async function openTwice(era: EraName, cacheDir: string, searchFirst = false): Promise<Opened> {
  const wb = await startEra('stdio', era, config, undefined, {}, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
  try {
    const first = (await wb.client.callTool({ name: 'open_toolbox', arguments: searchFirst ? SEARCH : OPEN })) as CallToolResult;
    assert.notEqual(first.isError, true, textOf(first));
    await wb.client.callTool({ name: 'open_toolbox', arguments: searchFirst ? OPEN : SEARCH });
    const answer = first.structuredContent as { servers_cached?: { server: string; state: string; age: string }[]; servers_connected: string[] };
    return { cached: new Map((answer.servers_cached ?? []).map((c) => [c.server, c])), connected: answer.servers_connected, stderr: wb.stderr() };
  } finally {
    await wb.close();
  }
}

/** The tool list files of the cache, with their paths. */
async function toolFiles(cacheDir: string): Promise<{ path: string; server: string; json: Record<string, unknown> }[]> {
  const names = (await readdir(cacheDir)).filter((f) => f.endsWith('.json'));
  const files = await Promise.all(names.map(async (f) => ({ path: join(cacheDir, f), json: JSON.parse(await readFile(join(cacheDir, f), 'utf8')) as Record<string, unknown> })));
  return files.filter((f) => f.json.kind === 'tools').map((f) => ({ ...f, server: f.json.server as string }));
}

/** A cache filled by a first workbench (its lists and eras). */
async function filled(era: EraName): Promise<{ cacheDir: string; cleanup: () => Promise<void> }> {
  const { dir, cleanup } = await tempDir('wb-cache-trust-');
  const cacheDir = join(dir, 'cache');
  const first = await openTwice(era, cacheDir);
  assert.equal(first.cached.size, 0, 'nothing cached yet');
  assert.equal((await toolFiles(cacheDir)).length, 2);
  return { cacheDir, cleanup };
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('the catalog cache trusts only what is the user\'s own', () => {
  for (const era of ERAS) {
    it(`ignores a directory others may write to, warns once, and leaves its mode alone (${era} client)`, { skip: process.platform === 'win32' }, async () => {
      const { cacheDir, cleanup } = await filled(era);
      try {
        await chmod(cacheDir, 0o777);
        const second = await openTwice(era, cacheDir);
        assert.equal(second.cached.size, 0, 'nothing shown from it');
        assert.deepEqual(second.connected.sort(), ['leg', 'mod']);
        assert.equal(count(second.stderr, `ignoring the catalog cache in ${cacheDir}`), 1, second.stderr);
        assert.match(second.stderr, new RegExp(`chmod 700 ${cacheDir}`));
        assert.equal((await stat(cacheDir)).mode & 0o777, 0o777, 'never chmod-ed');
        // Made the user's alone again, it is used again; so is one its group may write to (per-user groups, umask 002).
        await chmod(cacheDir, 0o700);
        assert.equal((await openTwice(era, cacheDir)).cached.size, 2);
        await chmod(cacheDir, 0o770);
        assert.equal((await openTwice(era, cacheDir)).cached.size, 2);
      } finally {
        await cleanup();
      }
    });

    it(`ignores a file another user owns, with one warning naming it (${era} client)`, { skip: !isRoot && 'needs root to give a file to another user' }, async () => {
      const { cacheDir, cleanup } = await filled(era);
      try {
        const planted = (await toolFiles(cacheDir)).find((f) => f.server === 'leg')!;
        await writeFile(planted.path, JSON.stringify({ ...planted.json, freshUntil: new Date(Date.now() + HOUR).toISOString() }));
        await chown(planted.path, 65534, 65534);
        const second = await openTwice(era, cacheDir);
        assert.ok(!second.cached.has('leg'), 'not shown');
        assert.ok(second.cached.has('mod'), 'the user\'s own file still is');
        assert.equal(count(second.stderr, planted.path), 1, second.stderr);
        assert.match(second.stderr, /owned by another user/);
      } finally {
        await cleanup();
      }
    });

    it(`counts a file's freshness for at most 24 hours, and does not use a listing in the future (${era} client)`, async () => {
      const { cacheDir, cleanup } = await filled(era);
      try {
        for (const file of await toolFiles(cacheDir)) {
          // leg (a handshake-era server, which sends no hints) claims to be fresh until 2099, listed 25 hours ago;
          // mod claims to have been listed in 2099.
          const listedAt = file.server === 'leg' ? new Date(Date.now() - 25 * HOUR).toISOString() : '2099-01-01T00:00:00.000Z';
          await writeFile(file.path, JSON.stringify({ ...file.json, listedAt, freshUntil: '2099-01-01T00:00:00.000Z' }), { mode: 0o600 });
        }
        const second = await openTwice(era, cacheDir, true);
        assert.equal(second.cached.get('leg')?.state, 'unchecked', `${JSON.stringify([...second.cached])} ${second.stderr}`);
        assert.equal(second.cached.get('leg')?.age, '25 h');
        assert.ok(!second.cached.has('mod'), 'a listing in the future is not used');
        assert.equal(count(second.stderr, 'listed in the future'), 1, second.stderr);
      } finally {
        await cleanup();
      }
    });

    it(`warns once about a file that cannot be read or holds no list, naming it and what to do (${era} client)`, async () => {
      const { cacheDir, cleanup } = await filled(era);
      try {
        const [leg, mod] = ['leg', 'mod'].map((server) => async () => (await toolFiles(cacheDir)).find((f) => f.server === server)!);
        const wrong = await mod!();
        await writeFile(wrong.path, JSON.stringify({ ...wrong.json, tools: { echo: 1 } }), { mode: 0o600 });
        const unreadable = (await leg!()).path;
        // Root reads any file whatever its mode: a directory in its place cannot be read either.
        if (isRoot) {
          await rm(unreadable);
          await mkdir(unreadable);
        } else {
          await chmod(unreadable, 0);
        }
        const second = await openTwice(era, cacheDir);
        assert.equal(second.cached.size, 0);
        assert.equal(count(second.stderr, `ignoring the catalog cache file ${wrong.path}`), 1, second.stderr);
        assert.match(second.stderr, /does not hold a tools list as this version writes it; it is rewritten after the server connects/);
        assert.equal(count(second.stderr, `ignoring the catalog cache file ${unreadable}`), 1, second.stderr);
        assert.match(second.stderr, /cannot be read \((?:permission denied|it is a directory, not a file)\); delete it/);
      } finally {
        await cleanup();
      }
    });
  }
});
