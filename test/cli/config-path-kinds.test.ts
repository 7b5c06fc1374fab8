import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { logLines } from '../helpers/log-lines.js';
import { runCliAsync } from '../helpers/cli-run.js';
import { tempDir } from '../helpers/workbench-process.js';

// A config path that names a directory (README "CLI"): every command that reads the config says what is wrong, where,
// and what to type instead (a file in it), exits non-zero, prints no stack trace, and makes nothing in it.

// With `--state-file` for those that take one, so none reads or makes one in the home.
const commands: string[][] = [
  ['validate'],
  ['doctor', '--state-file'],
  ['migrate'],
  ['tools', 'list', '--state-file'],
  ['tools', 'diff', 'dev/e', '--state-file'],
  ['auth', 'login', 'dev/e', '--state-file'],
  ['auth', 'status'],
  ['server', 'add', 'dev', 'e', '--config-here', '--', 'echo'],
  ['init'],
];

describe('--config naming a directory', () => {
  for (const command of commands) {
    it(`${command.slice(0, 2).join(' ')}: names the directory and the file to name instead`, async () => {
      const { dir, cleanup } = await tempDir('wb-config-dir-');
      try {
        const folder = join(dir, 'configs');
        await mkdir(folder);
        const env = { HOME: join(dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
        const args = command.flatMap((a) => (a === '--state-file' ? [a, join(dir, 'tool-state.json')] : a === '--config-here' ? [] : [a]));
        const at = command.includes('--config-here') ? args.indexOf('--') : args.length;
        const run = await runCliAsync([...args.slice(0, at), '--config', folder, ...args.slice(at)], env);
        assert.notEqual(run.code, 0, run.stdout);
        assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
        const errors = logLines(run.stderr).filter((l) => l.level === 'error');
        assert.equal(errors.length, 1, run.stderr);
        assert.match(run.stderr, new RegExp(`${folder.replaceAll('/', '\\/')}: it is a directory, not a file`));
        assert.match(run.stderr, new RegExp(`--config ${folder.replaceAll('/', '\\/')}\\/workbench-config\\.json`), 'what to type instead');
      } finally {
        await cleanup();
      }
    });
  }

  it('migrate --from CLIENT naming a directory: says to pass the client\'s file itself, not --config', async () => {
    const { dir, cleanup } = await tempDir('wb-config-dir-');
    try {
      const folder = join(dir, 'claude');
      await mkdir(folder);
      const env = { HOME: join(dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
      const run = await runCliAsync(['migrate', '--from', 'claude-code', folder, '--toolbox', 'cc', '--config', join(dir, 'workbench-config.json')], env);
      assert.notEqual(run.code, 0, run.stdout);
      assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
      assert.match(run.stderr, /it is a directory, not a file\. Pass the file itself: mcp-workbench migrate --from claude-code <file> --toolbox cc\./);
    } finally {
      await cleanup();
    }
  });
});
