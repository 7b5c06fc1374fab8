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
async function doctor(config: object): Promise<{ report: DoctorReport; text: string }> {
  const file = join(own.dir, 'config.json');
  await writeFile(file, JSON.stringify(config));
  const env = { PATH: process.env.PATH ?? '', HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'home', 'cache') };
  const run = (extra: string[]) => {
    const cli = [node, paths.cli, 'doctor', '--config', file, ...extra];
    const [command, ...args] = root ? ['setpriv', '--bounding-set=-all', '--inh-caps=-all', '--', ...cli] : cli;
    return spawnSync(command!, args, { encoding: 'utf8', env, timeout: 60_000 });
  };
  const json = run(['--json']);
  assert.equal(json.status, 1, json.stderr);
  return { report: JSON.parse(json.stdout) as DoctorReport, text: run([]).stdout };
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
