import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-server.mjs';
import { runCliAsync } from '../helpers/cli-run.js';
import { tempDir } from '../helpers/workbench-process.js';
import { fixtureBrowser } from '../helpers/oauth-browser.js';

// `auth login` of a remote server whose entry names `${user:dir}` (README "Files of each user"): the folder it stands
// for is user local's beside the state file, as `serve` with that state file has it, never one in the home folder.

const browser = fixtureBrowser;

describe('auth login of a server naming ${user:dir}', () => {
  let fixture: OAuthFixture;
  before(async () => {
    fixture = await startOAuthFixture();
  });
  after(async () => {
    await fixture?.close();
  });

  for (const how of ['--state-file', 'WORKBENCH_STATE_FILE'] as const) {
    it(`uses users/local beside the state file of ${how}, as serve does`, async () => {
      const { dir, cleanup } = await tempDir('wb-auth-user-dir-');
      try {
        const home = join(dir, 'home');
        const stateFile = join(dir, 'state', 'tool-state.json');
        await mkdir(home);
        const configPath = join(dir, 'workbench-config.json');
        const entry = { type: 'http', url: fixture.url, auth: 'oauth', headers: { 'X-Notes': '${user:dir}/notes' } };
        await writeFile(configPath, JSON.stringify({ toolboxes: { dev: { mcpServers: { remote: entry } } } }));
        const env = {
          HOME: home,
          BROWSER: browser,
          MCP_WORKBENCH_OAUTH_DIR: join(dir, 'oauth'),
          MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache'),
          MCP_WORKBENCH_SECRET_STORE: 'file',
          MCP_WORKBENCH_SECRETS_FILE: join(dir, 'secrets.json'),
          OAUTH_BROWSER_LOG: join(dir, 'browser.log'),
          ...(how === 'WORKBENCH_STATE_FILE' && { WORKBENCH_STATE_FILE: stateFile }),
        };
        const args = ['auth', 'login', 'dev/remote', '--config', configPath, ...(how === '--state-file' ? ['--state-file', stateFile] : [])];
        const run = await runCliAsync(args, env);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /signed in to dev\/remote/);
        assert.ok(existsSync(join(dir, 'state', 'users', 'local')), 'the folder serve gives user local');
        assert.ok(!existsSync(join(home, '.mcp-workbench', 'users')), 'no folder under the home');
      } finally {
        await cleanup();
      }
    });
  }
});
