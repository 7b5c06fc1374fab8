import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra } from '../helpers/era-workbench.js';
import { runCliAsync } from '../helpers/cli-run.js';
import { fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

// README "Pinned tool definitions": tool-pins.json is written under a lock, so processes sharing it lose none of each
// other's approvals. A pins file reached through a symbolic link (a dotfiles manager's link, or a linked folder) is the
// file it points to: every process locks that one, whichever path it was given, and a write keeps the link.

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
type Pins = { format: number; servers: Record<string, { tools: Record<string, { fingerprint: string }> }> };
const readPinsFile = async (path: string): Promise<Pins> => JSON.parse(await readFile(path, 'utf8')) as Pins;
const open = (client: Client, toolbox: string) => client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: toolbox } }) as Promise<CallToolResult>;

/**
 * Another process holding the pins lock, as a workbench does in the middle of its read-modify-write (the lock is
 * proper-lockfile's, so any process using it on the same path is a fellow holder). Resolves once it holds it; the
 * function returned releases it and waits for the process to end.
 */
async function holdLock(path: string): Promise<() => Promise<void>> {
  // Refreshed every second: the workbench breaks a lock not refreshed for 5 s, and the library's own default (every
  // 5 s) would let a loaded machine's workbench take this one as a crashed holder's.
  const script = `require('proper-lockfile').lock(${JSON.stringify(path)}, { realpath: false, update: 1000 }).then((release) => {
    console.log('locked');
    process.stdin.resume();
    process.stdin.on('end', () => release().then(() => process.exit(0)));
  });`;
  const holder = spawn(process.execPath, ['-e', script], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => holder.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    holder.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    holder.once('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
  });
  return async () => {
    holder.stdin.end();
    await exited;
  };
}

describe('tool-pins.json reached through a symbolic link', () => {
  it('is locked as the file it points to: a write through the link waits for a holder of the real file, and keeps the link', { timeout: 300_000 }, async (t) => {
    const { dir, cleanup } = await tempDir();
    t.after(cleanup);
    const real = join(dir, 'dotfiles', 'tool-pins.json');
    const viaLink = join(dir, 'home');
    await mkdir(join(dir, 'dotfiles'));
    await mkdir(viaLink);
    await writeFile(real, `${JSON.stringify({ format: 1, servers: {} }, null, 2)}\n`);
    await symlink(real, join(viaLink, 'tool-pins.json'));
    const statePath = join(viaLink, 'tool-state.json');
    const config = { toolboxes: { notes: { mcpServers: { s: fixtureServer() } } } };

    const release = await holdLock(real);
    let released = false;
    t.after(() => (released ? undefined : release()));
    const wb = await startEra('stdio', 'legacy', config, () => {}, {}, { args: ['--state-file', statePath], env: { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') } });
    try {
      await open(wb.client, 'notes');
      const told = () => /(could not record|recorded) the tool definitions of notes\/s/.exec(wb.stderr())?.[1];
      await waitFor(() => told() !== undefined, { timeoutMs: 120_000, what: 'the first sight of notes/s to be recorded or refused' });
      assert.equal(told(), 'could not record', `the write through the link must wait for the lock on ${real}:\n${wb.stderr()}`);
      assert.ok(wb.stderr().includes(`${real}.lock`), `the refusal names the lock of the real file:\n${wb.stderr()}`);
      assert.deepEqual((await readPinsFile(real)).servers, {}, 'nothing was written under the holder');
    } finally {
      await wb.close();
    }
    await release();
    released = true;

    // Once the holder is done, an approval through the link lands in the real file, and the link stays a link.
    const configPath = join(dir, 'config.json');
    await writeFile(configPath, JSON.stringify(config));
    const approve = await runCliAsync(['tools', 'approve', 'notes__s__echo', '--config', configPath, '--state-file', statePath], { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') });
    assert.equal(approve.code, 0, approve.stderr);
    assert.ok((await lstat(join(viaLink, 'tool-pins.json'))).isSymbolicLink(), 'the link was kept, not replaced by a file');
    assert.ok('echo' in ((await readPinsFile(real)).servers['notes/s']?.tools ?? {}), 'the approval is in the real file');
  });

  it('whose target is gone (a dotfiles folder moved away) is not "none yet": an approval refuses, naming the link, and keeps it', async (t) => {
    const { dir, cleanup } = await tempDir();
    t.after(cleanup);
    const home = join(dir, 'home');
    const gone = join(dir, 'dotfiles-moved-away', 'tool-pins.json');
    await mkdir(home);
    await symlink(gone, join(home, 'tool-pins.json'));
    const configPath = join(dir, 'config.json');
    await writeFile(configPath, JSON.stringify({ toolboxes: { notes: { mcpServers: { s: fixtureServer() } } } }));
    const approve = await runCliAsync(['tools', 'approve', 'notes__s__echo', '--config', configPath, '--state-file', join(home, 'tool-state.json')], { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') });
    assert.notEqual(approve.code, 0, approve.stdout);
    assert.ok(approve.stderr.includes(`is a symbolic link to ${gone}, which does not exist`), approve.stderr);
    assert.ok((await lstat(join(home, 'tool-pins.json'))).isSymbolicLink(), 'the link was kept, not replaced by a file');
  });

  it("two workbenches, one through a link and one given the real path, lose none of each other's first sights", { timeout: 300_000 }, async (t) => {
    const { dir, cleanup } = await tempDir();
    t.after(cleanup);
    const shared = join(dir, 'shared');
    const linked = join(dir, 'linked');
    await mkdir(shared);
    await mkdir(linked);
    await writeFile(join(shared, 'tool-pins.json'), `${JSON.stringify({ format: 1, servers: {} }, null, 2)}\n`);
    await symlink(join(shared, 'tool-pins.json'), join(linked, 'tool-pins.json'));
    const names = (who: string) => Array.from({ length: 5 }, (_, i) => `${who}${i}`);
    const configOf = (who: string) => ({ toolboxes: Object.fromEntries(names(who).map((name) => [name, { mcpServers: { s: fixtureServer() } }])) });
    const launch = (state: string, cache: string) => ({ args: ['--state-file', state], env: { MCP_WORKBENCH_CACHE_DIR: join(dir, cache) } });
    const [a, b] = await Promise.all([
      startEra('stdio', 'legacy', configOf('a'), () => {}, {}, launch(join(linked, 'tool-state.json'), 'cache-a')),
      startEra('stdio', 'modern', configOf('b'), () => {}, {}, launch(join(shared, 'tool-state.json'), 'cache-b')),
    ]);
    try {
      await Promise.all([...names('a').map((name) => open(a.client, name)), ...names('b').map((name) => open(b.client, name))]);
      const recorded = (wb: typeof a, who: string) => names(who).every((name) => wb.stderr().includes(`recorded the tool definitions of ${name}/s `));
      await waitFor(() => recorded(a, 'a') && recorded(b, 'b'), { timeoutMs: 120_000, what: 'every first sight to be recorded' });
      const servers = Object.keys((await readPinsFile(join(shared, 'tool-pins.json'))).servers).sort();
      assert.deepEqual(servers, [...names('a'), ...names('b')].map((name) => `${name}/s`).sort(), `${a.stderr()}\n${b.stderr()}`);
      assert.ok((await lstat(join(linked, 'tool-pins.json'))).isSymbolicLink(), 'the link was kept');
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
    }
  });
});
