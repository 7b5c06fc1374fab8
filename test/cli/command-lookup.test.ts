import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { DoctorReport } from '../../src/doctor/types.js';
import { dirPerTest } from '../helpers/cli-run.js';
import { node, paths } from '../helpers/workbench-process.js';

/**
 * README "One bad part fails only itself": a stdio server's command is looked up on the PATH its child gets. The
 * system's lookup answers "permission denied" both for a file that is not executable and for a command that is nowhere
 * when some directory on that PATH may not be searched (a PATH inherited from another user, as with `sudo -E`), so the
 * workbench looks again and says which it is: never "make it executable" for a command that does not exist.
 */
const own = dirPerTest('wb-command-lookup-');
const root = process.getuid?.() === 0;
const asRootWithoutSetpriv = root && spawnSync('setpriv', ['--version']).status !== 0;

/** `doctor --json` on `config`; as root, without capabilities, so a folder's mode holds for it as for anyone. */
async function doctor(config: object, options: { path?: string; exitCode?: number } = {}): Promise<{ report: DoctorReport; text: string }> {
  const file = await writeConfig(config);
  const json = cli(['doctor', '--config', file, '--json'], options.path);
  assert.equal(json.status, options.exitCode ?? 1, json.stderr);
  return { report: JSON.parse(json.stdout) as DoctorReport, text: cli(['doctor', '--config', file], options.path).stdout };
}

async function writeConfig(config: object): Promise<string> {
  const file = join(own.dir, 'config.json');
  await writeFile(file, JSON.stringify(config));
  return file;
}

/** The CLI run in the test's own dir (its cwd: where a server without `cwd` runs), with `path` as its PATH. */
function cli(argv: string[], path = process.env.PATH ?? '') {
  const env = { PATH: path, HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'home', 'cache') };
  const full = [node, paths.cli, ...argv];
  const [command, ...args] = root ? ['setpriv', '--bounding-set=-all', '--inh-caps=-all', '--', ...full] : full;
  return spawnSync(command!, args, { encoding: 'utf8', env, cwd: own.dir, timeout: 60_000 });
}

/** An executable script at `file` that starts the fixture MCP server. */
async function serverScript(file: string, mode = 0o755): Promise<void> {
  await writeFile(file, `#!/bin/sh\nexec '${node}' '${paths.fixture}'\n`, { mode });
}

describe('a command that cannot be started is named for what it is', { skip: asRootWithoutSetpriv && 'as root it needs setpriv (util-linux)' }, () => {
  it('nowhere on a PATH with a folder that may not be searched: not found; a file without the execute bit: not executable, with its path', async () => {
    const locked = join(own.dir, 'locked');
    const plain = join(own.dir, 'plain');
    await mkdir(locked);
    await mkdir(plain);
    await writeFile(join(plain, 'wb-plain-file'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    await chmod(locked, 0o000);
    try {
      const { report, text } = await doctor({
        toolboxes: {
          t: {
            mcpServers: {
              nowhere: { command: 'wb-nowhere-7f3a', env: { PATH: `${locked}:${plain}` } },
              plainfile: { command: 'wb-plain-file', env: { PATH: `${locked}:${plain}` } },
            },
          },
        },
      });
      const server = (name: string) => report.toolboxes[0]!.servers.find((s) => s.server === name)!;
      assert.equal(server('nowhere').failure?.summary, 'command not found', text);
      assert.match(server('nowhere').failure?.message ?? '', /command "wb-nowhere-7f3a" was not found on the PATH the server starts with/);
      assert.ok(server('nowhere').failure?.message.includes(`"${locked}"`), 'the folder it may not search is named');
      assert.doesNotMatch(server('nowhere').failure?.message ?? '', /chmod|not executable/);
      assert.equal(server('plainfile').failure?.summary, 'command is not executable', text);
      assert.ok(server('plainfile').failure?.message.includes(`command "${join(plain, 'wb-plain-file')}" is not executable`), server('plainfile').failure?.message);
      assert.match(text, /\[FAIL\] t\/nowhere: not connected — command not found/);
    } finally {
      await chmod(locked, 0o755);
    }
  });
});

/**
 * An empty PATH entry means the current directory, and a relative one is taken from it: for a server that is the `cwd`
 * it runs in (the system's lookup runs in the child), not the workbench's. `validate` and `doctor` say what happens.
 */
describe('empty and relative PATH entries are taken from the folder the server runs in', { skip: asRootWithoutSetpriv && 'as root it needs setpriv (util-linux)' }, () => {
  it('validate finds what starts, and misses what does not; doctor agrees', async () => {
    const srv = join(own.dir, 'srv');
    const elsewhere = join(own.dir, 'elsewhere');
    await mkdir(join(srv, 'bin'), { recursive: true });
    await mkdir(elsewhere);
    await serverScript(join(srv, 'wb-in-cwd'));
    await serverScript(join(srv, 'bin', 'wb-in-bin'));
    // In the workbench's own folder only: an empty entry does not reach it from a server running elsewhere.
    await serverScript(join(own.dir, 'wb-beside-workbench'));
    const path = `:${process.env.PATH ?? ''}`;
    const config = {
      toolboxes: {
        t: {
          mcpServers: {
            empty: { command: 'wb-in-cwd', cwd: srv },
            relative: { command: 'wb-in-bin', cwd: srv, env: { PATH: `bin:${process.env.PATH ?? ''}` } },
            beside: { command: 'wb-beside-workbench', cwd: elsewhere },
          },
        },
      },
    };
    const validate = cli(['validate', '--config', await writeConfig(config)], path);
    assert.equal(validate.status, 1, validate.stderr);
    assert.match(validate.stderr, /mcpServers\.beside\.command: "wb-beside-workbench" was not found on the PATH the server starts with/);
    assert.doesNotMatch(validate.stderr, /mcpServers\.(empty|relative)/, 'what starts is not reported');
    const { report, text } = await doctor(config, { path });
    const server = (name: string) => report.toolboxes[0]!.servers.find((s) => s.server === name)!;
    assert.equal(server('empty').connected, true, text);
    assert.equal(server('relative').connected, true, text);
    assert.equal(server('beside').connected, false, text);
    assert.equal(server('beside').failure?.summary, 'command not found', text);
  });

  it('a file without the execute bit in the server\'s cwd, reached by an empty entry: not executable, with its path', async () => {
    const srv = join(own.dir, 'srv');
    await mkdir(srv);
    await serverScript(join(srv, 'wb-plain-here'), 0o644);
    const { report, text } = await doctor({
      toolboxes: { t: { mcpServers: { plain: { command: 'wb-plain-here', cwd: srv, env: { PATH: `/usr/bin::/bin` } } } } },
    });
    const failure = report.toolboxes[0]!.servers[0]!.failure;
    assert.equal(failure?.summary, 'command is not executable', text);
    assert.ok(failure?.message.includes(`command "${join(srv, 'wb-plain-here')}" is not executable`), failure?.message);
  });
});

/**
 * `validate` names a command whose only match is a file without the execute bit as that file, not executable, with the
 * fix a failed start gives (README "One bad part fails only itself"): never "not found on the PATH".
 */
describe('validate of a command that is only a file without the execute bit', { skip: asRootWithoutSetpriv && 'as root it needs setpriv (util-linux)' }, () => {
  it('says it is not executable, names the file and says chmod +x, on the PATH and in the cwd', async () => {
    const plain = join(own.dir, 'plain');
    const srv = join(own.dir, 'srv');
    await mkdir(plain);
    await mkdir(srv);
    await serverScript(join(plain, 'wb-plain-path'), 0o644);
    await serverScript(join(srv, 'wb-plain-cwd'), 0o644);
    const config = {
      toolboxes: {
        t: {
          mcpServers: {
            onpath: { command: 'wb-plain-path', env: { PATH: `${plain}:/usr/bin:/bin` } },
            incwd: { command: 'wb-plain-cwd', cwd: srv, env: { PATH: '/usr/bin::/bin' } },
          },
        },
      },
    };
    const validate = cli(['validate', '--config', await writeConfig(config)]);
    assert.equal(validate.status, 1, validate.stderr);
    for (const [server, file] of [['onpath', join(plain, 'wb-plain-path')], ['incwd', join(srv, 'wb-plain-cwd')]] as const) {
      const line = validate.stderr.split('\n').find((l) => l.includes(`mcpServers.${server}.command`)) ?? '';
      assert.ok(line.includes(`is not executable: ${file}`), validate.stderr);
      assert.ok(line.includes(`chmod +x ${file}`), validate.stderr);
    }
    assert.doesNotMatch(validate.stderr, /was not found on the PATH/);
  });
});
