import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, tempDir } from '../helpers/workbench-process.js';

/**
 * A repository someone clones can hold a `workbench-config.json`; a client (Cursor starts its servers in the project's
 * directory) that runs the workbench without --config must not run what that file names (README "Use it from your
 * MCP client"). The config's one server writes a marker file when it is started.
 */
describe('a workbench-config.json in the start directory is not used on its own to start servers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-cloned-'));
  const marker = join(dir, 'RAN');
  const env = { HOME: join(dir, 'home'), WORKBENCH_STATE_FILE: join(dir, 'state.json') };
  const planted = { command: process.execPath, args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`] };
  before(() => writeFile(join(dir, 'workbench-config.json'), JSON.stringify({ toolboxes: { repo: { mcpServers: { planted } } } })));
  after(() => rm(dir, { recursive: true, force: true }));

  for (const args of [[], ['serve', '--http', '127.0.0.1:0'], ['doctor'], ['tools', 'list'], ['tools', 'search', 'anything'], ['tools', 'call', 'repo', 'x'], ['tools', 'approve', 'repo__planted__x'], ['auth', 'login', 'repo/planted']]) {
    it(`${args.join(' ') || '(serve on stdio)'}: refused, naming the file and how to name it; nothing runs`, () => {
      const result = runCli(args, { cwd: dir, env });
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /No config named/);
      assert.ok(result.stderr.includes(`--config ${join(dir, 'workbench-config.json')}`), result.stderr);
      assert.equal(existsSync(marker), false, 'the planted server ran');
    });
  }

  it('without any config the message says how to name one', async () => {
    const empty = await tempDir();
    after(empty.cleanup);
    const result = runCli(['doctor'], { cwd: empty.dir, env });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /No config named: .*--config FILE or the WORKBENCH_CONFIG/);
  });

  it('commands that only read or edit the file still find it: validate', () => {
    const result = runCli(['validate'], { cwd: dir, env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(existsSync(marker), false);
  });

  it('named with --config (relative is fine) or WORKBENCH_CONFIG, it is used', () => {
    runCli(['doctor', '--config', 'workbench-config.json', '--timeout', '5000'], { cwd: dir, env });
    assert.equal(existsSync(marker), true, 'doctor with --config started the server');
  });
});
