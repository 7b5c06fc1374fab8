import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-server.mjs';
import { runCliAsync } from '../helpers/cli-run.js';
import { tokenClient } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { tempDir, textOf } from '../helpers/workbench-process.js';
import { fixtureBrowser } from '../helpers/oauth-browser.js';

// README "Serving over HTTP", "OAuth sign-ins are the workbench's, not each user's": a remote server behind OAuth has
// one sign-in in the workbench, which every token's user calls it with — as the README says, not a sign-in each.

const browser = fixtureBrowser;
const TOKEN_A = 'alice-0123456789abcdef0123456789abcdef';
const TOKEN_B = 'bob-0123456789abcdef0123456789abcdef0123';

async function client(url: string, token: string, era: 'modern' | 'legacy'): Promise<Client> {
  const c = await tokenClient(url, token, era);
  return c;
}

async function whoami(c: Client): Promise<string> {
  const result = (await c.callTool({ name: 'use_tool', arguments: { toolbox_name: 'dev', tool_name: 'dev__remote__whoami', arguments: {} } })) as CallToolResult;
  assert.notEqual(result.isError, true, textOf(result));
  return textOf(result);
}

describe('a remote server behind OAuth over --http with several tokens', () => {
  let fixture: OAuthFixture;
  before(async () => {
    fixture = await startOAuthFixture();
  });
  after(async () => {
    await fixture?.close();
  });

  it("every user calls it with the operator's one sign-in (one token file, no sign-in of their own)", async () => {
    const { dir, cleanup } = await tempDir('wb-oauth-users-');
    const config = { toolboxes: { dev: { mcpServers: { remote: { type: 'http', url: fixture.url, auth: 'oauth' } } } } };
    const configPath = join(dir, 'workbench-config.json');
    await writeFile(configPath, JSON.stringify(config));
    const env = { MCP_WORKBENCH_OAUTH_DIR: join(dir, 'oauth'), OAUTH_BROWSER_LOG: join(dir, 'browser.log') };
    try {
      const login = await runCliAsync(['auth', 'login', 'dev/remote', '--config', configPath], { ...env, BROWSER: browser });
      assert.equal(login.code, 0, login.stderr);
      const signIns = fixture.authorizations.length;
      const wb = await startHttpWorkbench(config, ['--http', '0', '--no-browser'], { ...env, WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}` });
      const a = await client(wb.url, TOKEN_A, 'modern');
      const b = await client(wb.url, TOKEN_B, 'legacy');
      try {
        const [asA, asB] = [await whoami(a), await whoami(b)];
        assert.equal(asB, asA, 'both users are the same OAuth client and sign-in to the server');
        assert.equal(fixture.authorizations.length, signIns, 'no user signed in on their own');
        assert.equal((await readdir(join(dir, 'oauth'))).filter((f) => f.endsWith('.json')).length, 1, 'one token file for the server');
      } finally {
        await Promise.allSettled([a.close(), b.close()]);
        await wb.stop();
      }
    } finally {
      await cleanup();
    }
  });
});
