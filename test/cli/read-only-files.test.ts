import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dirPerTest, runCliAsync } from '../helpers/cli-run.js';
import { fixtureServer, node, paths } from '../helpers/workbench-process.js';

/**
 * Files the CLI replaces (the tool-state file, the config) are written to a temp file and renamed over the old one,
 * which the directory allows whatever the file's own permissions say. A read-only file is left alone, and a failure
 * names the real path and what to do (README "Enabled and disabled tools", "Command line").
 */

const own = dirPerTest('wb-read-only-');

const env = (): Record<string, string> => ({ HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache'), WORKBENCH_STATE_FILE: join(own.dir, 'state.json') });
const run = (args: string[]) => runCliAsync(args, env(), { cwd: own.dir });

/** Makes `path` read-only (0444): even root's writes are refused by the workbench, whose access() would allow them. */
async function readOnly(name: string, text: string): Promise<string> {
  const path = join(own.dir, name);
  await writeFile(path, text);
  await chmod(path, 0o444);
  return path;
}

describe('a read-only file is not replaced', () => {
  it('tools disable leaves a 0444 state file as it is, naming it and what to do', async () => {
    const config = join(own.dir, 'cfg.json');
    await writeFile(config, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } }));
    const state = await readOnly('ro-state.json', '{ "enabled": [], "disabled": [] }\n');
    const result = await run(['tools', 'disable', '--force', '--config', config, '--state-file', state, 'tb__fx__echo']);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(await readFile(state, 'utf8'), '{ "enabled": [], "disabled": [] }\n');
    assert.equal((await stat(state)).mode & 0o777, 0o444);
    assert.ok(result.stderr.includes(state), result.stderr);
    assert.match(result.stderr, /read-only/);
    assert.ok(result.stderr.includes(`chmod u+w ${state}`), result.stderr);
  });

  it('secret set leaves a read-only (0400) secret file as it is, naming it and what to do', async () => {
    const text = '{\n  "format": 1,\n  "secrets": { "github": "tok-old-value" }\n}\n';
    const path = join(own.dir, 'secrets.json');
    await writeFile(path, text);
    await chmod(path, 0o400);
    const result = await runCliAsync(['secret', 'set', 'github'], { ...env(), MCP_WORKBENCH_SECRET_STORE: 'file', MCP_WORKBENCH_SECRETS_FILE: path }, { cwd: own.dir, input: 'tok-new-value\n' });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(await readFile(path, 'utf8'), text);
    assert.equal((await stat(path)).mode & 0o777, 0o400);
    assert.ok(result.stderr.includes(path), result.stderr);
    assert.match(result.stderr, /read-only/);
    assert.match(result.stderr, /chmod u\+w/);
  });

  it('server add and migrate --write leave a 0444 config as it is, with no backup', async () => {
    const text = '{\n  "toolMode": "proxy",\n  "toolboxes": { "dev": { "mcpServers": { "m": { "command": "node" } } } }\n}\n';
    const config = await readOnly('ro-config.json', text);
    const before = await readdir(own.dir);
    for (const args of [['server', 'add', 'dev', 'x', '--config', config, '--', 'node'], ['migrate', '--config', config, '--write']]) {
      const result = await run(args);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(await readFile(config, 'utf8'), text, args.join(' '));
      assert.deepEqual(await readdir(own.dir), before, `${args.join(' ')}: no backup`);
      assert.ok(result.stderr.includes(config) && /read-only/.test(result.stderr), result.stderr);
      assert.ok(result.stderr.includes(`chmod u+w ${config}`), result.stderr);
    }
  });
});

describe('a config in a directory that cannot be written', () => {
  const asRootWithoutSetpriv = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status !== 0;
  it('server add names the config and its directory, never the temp file, and says what to do', { skip: asRootWithoutSetpriv && 'as root it needs setpriv (util-linux)' }, async () => {
    // Root writes anywhere: as root the CLI runs without capabilities (setpriv, util-linux), so the folder's mode holds
    // for it as for anyone, while it still reads the clone wherever that is (a private temp dir, say).
    const root = process.getuid?.() === 0;
    const folder = join(own.dir, 'locked');
    await mkdir(folder);
    const config = join(folder, 'c2.json');
    const text = '{ "toolboxes": { "dev": { "mcpServers": {} } } }\n';
    await writeFile(config, text);
    await chmod(folder, 0o555);
    const cli = [node, paths.cli, 'server', 'add', 'dev', 'x', '--config', config, '--', 'node'];
    const [command, ...args] = root ? ['setpriv', '--bounding-set=-all', '--inh-caps=-all', '--', ...cli] : cli;
    const result = spawnSync(command!, args, {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'home', 'cache') },
      timeout: 60_000,
    });
    await chmod(folder, 0o755);
    assert.equal(result.status, 1, result.stderr);
    assert.equal(await readFile(config, 'utf8'), text);
    assert.ok(result.stderr.includes(`Did not write ${config}`), result.stderr);
    assert.doesNotMatch(result.stderr, /c2\.json\.\d+/, 'no temp file name');
    assert.ok(result.stderr.includes(`Fix the permissions of ${folder}`), result.stderr);
  });
});

describe('a folder the workbench needs cannot be created: the message names the part of its path that blocks it', () => {
  /** A file where a folder of the path should be. */
  async function fileInTheWay(): Promise<string> {
    const blocker = join(own.dir, 'not-a-folder');
    await writeFile(blocker, 'a file\n');
    return blocker;
  }

  it('tools disable with HOME a file: names HOME as a file, not the state folder under it', async () => {
    const home = await fileInTheWay();
    const config = join(own.dir, 'cfg.json');
    await writeFile(config, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } }));
    const result = await runCliAsync(['tools', 'disable', '--force', '--config', config, 'tb__fx__echo'], { HOME: home, MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache') }, { cwd: own.dir });
    assert.equal(result.code, 1, result.stderr);
    assert.ok(result.stderr.includes(`${home} is a file, not a folder`), result.stderr);
    assert.ok(result.stderr.includes(`Move or rename the file ${home}, or point --state-file`), result.stderr);
    assert.doesNotMatch(result.stderr, /a parent of it is not a directory/);
  });

  it('init --config under a file: names that file', async () => {
    const blocker = await fileInTheWay();
    const config = join(blocker, 'sub', 'workbench-config.json');
    const result = await run(['init', '--config', config]);
    assert.equal(result.code, 1, result.stderr);
    assert.ok(result.stderr.includes(`${blocker} is a file, not a folder`), result.stderr);
    assert.ok(result.stderr.includes(`Move or rename the file ${blocker}, or choose another file with --config`), result.stderr);
  });

  it('the catalog cache under a file: one warning naming that file, and the command still works', async () => {
    const blocker = await fileInTheWay();
    const config = join(own.dir, 'cfg.json');
    await writeFile(config, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } }));
    const result = await runCliAsync(['tools', 'list', '--config', config], { ...env(), MCP_WORKBENCH_CACHE_DIR: join(blocker, 'cache') }, { cwd: own.dir });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /tb__fx__echo/);
    const warnings = result.stderr.split('\n').filter((line) => line.includes('could not create the directory'));
    assert.equal(warnings.length, 1, result.stderr);
    assert.ok(warnings[0]!.includes(`${blocker} is a file, not a folder; move or rename the file ${blocker}, or set MCP_WORKBENCH_CACHE_DIR`), result.stderr);
  });

  const asRootWithoutSetpriv = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status !== 0;
  it('tools disable with the state file under a folder that cannot be written: names that folder', { skip: asRootWithoutSetpriv && 'as root it needs setpriv (util-linux)' }, async () => {
    const folder = join(own.dir, 'locked');
    await mkdir(folder);
    await chmod(folder, 0o555);
    const config = join(own.dir, 'cfg.json');
    await writeFile(config, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } }));
    const cli = [node, paths.cli, 'tools', 'disable', '--force', '--config', config, '--state-file', join(folder, 'a', 'b', 'state.json'), 'tb__fx__echo'];
    const [command, ...args] = process.getuid?.() === 0 ? ['setpriv', '--bounding-set=-all', '--inh-caps=-all', '--', ...cli] : cli;
    const result = spawnSync(command!, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env() }, timeout: 60_000 });
    await chmod(folder, 0o755);
    assert.equal(result.status, 1, result.stderr);
    assert.ok(result.stderr.includes(`${folder} is a folder this user cannot write to`), result.stderr);
    assert.ok(result.stderr.includes(`chmod u+w ${folder}`), result.stderr);
  });
});
