import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fixtureServer, runCli, tempDir } from '../helpers/workbench-process.js';
import { logLines } from '../helpers/log-lines.js';

/**
 * README "Command line": a mistyped command or option is a usage error (exit 2) naming it and the nearest valid one,
 * for every command and never by starting to serve; `-V`/`--version` print the version.
 */
const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

async function configFile(): Promise<string> {
  const { dir, cleanup } = await tempDir();
  after(cleanup);
  const path = join(dir, 'workbench-config.json');
  await writeFile(path, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } }));
  return path;
}

// The messages are the product: a typo's usage error must name what was typed and the nearest real name.
describe('command line: typos', () => {
  for (const flag of ['-V', '-v', '--version']) {
    it(`${flag} prints the version`, () => {
      const { code, stdout } = runCli([flag]);
      assert.equal(code, 0);
      assert.equal(stdout.trim(), version);
    });
  }

  for (const args of [['serve', '--htp', '3000'], ['--htp', '3000'], ['serve', '--htp=3000']]) {
    it(`${args.join(' ')}: exits 2 naming --htp and --http, and serves nothing`, async () => {
      const config = await configFile();
      const { code, stdout, stderr } = runCli([...args, '--config', config]);
      assert.equal(code, 2);
      assert.equal(stdout, '');
      assert.match(stderr, /"--htp"/);
      assert.match(stderr, /"--http"/);
      assert.deepEqual(logLines(stderr).map((l) => l.level), ['error'], 'one refusal, nothing started');
    });
  }

  it('serve: a near miss of a negated option is a typo too', async () => {
    const { code, stderr } = runCli(['serve', '--config', await configFile(), '--no-catalog-cach']);
    assert.equal(code, 2);
    assert.match(stderr, /"--no-catalog-cache"/);
  });

  it('a mistyped command names the nearest one', () => {
    const { code, stdout, stderr } = runCli(['valdate']);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /"valdate"/);
    assert.match(stderr, /"validate"/);
  });

  it('an unknown option of another command names the nearest one', () => {
    const { code, stderr } = runCli(['validate', '--jsn']);
    assert.equal(code, 2);
    assert.match(stderr, /--jsn/);
    assert.match(stderr, /--json/);
  });

  it('a mistyped subcommand names the nearest one', () => {
    const { code, stderr } = runCli(['tools', 'lsit']);
    assert.equal(code, 2);
    assert.match(stderr, /lsit/);
    assert.match(stderr, /\blist\b/);
  });
});
