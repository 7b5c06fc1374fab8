import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import { startOAuthFixture, type OAuthFixture } from '../fixtures/oauth-server.mjs';
import { runCliAsync, type CliRun } from '../helpers/cli-run.js';
import { node, paths, startWorkbench, tempDir, textOf, waitFor, workbenchErrorCode, type RunningWorkbench } from '../helpers/workbench-process.js';
import { writeFile } from 'node:fs/promises';
import { fixtureBrowser } from '../helpers/oauth-browser.js';

/**
 * OAuth sign-in of remote servers, end to end (README "Remote servers behind OAuth"): the built workbench against a
 * local OAuth-protected Streamable HTTP server (test/fixtures/oauth-server.mjs), with a stand-in browser ($BROWSER)
 * that follows the authorization redirect to the workbench's loopback receiver.
 */
const browser = fixtureBrowser;

interface Setup {
  dir: string;
  configPath: string;
  config: unknown;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** A config with one OAuth server per fixture (`dev/<name>`, with `auth` unless told otherwise), and an environment that keeps every file in a temp dir. */
async function setup(servers: Record<string, { url: string }>, auth: 'oauth' | undefined = 'oauth'): Promise<Setup> {
  const { dir, cleanup } = await tempDir('wb-oauth-');
  const entry = (url: string): Record<string, unknown> => ({ type: 'http', url, ...(auth && { auth }) });
  const config = { toolboxes: { dev: { mcpServers: Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, entry(s.url)])) } } };
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify(config));
  const env = {
    MCP_WORKBENCH_OAUTH_DIR: join(dir, 'oauth'),
    MCP_WORKBENCH_SECRET_STORE: 'file',
    MCP_WORKBENCH_SECRETS_FILE: join(dir, 'secrets.json'),
    OAUTH_BROWSER_LOG: join(dir, 'browser.log'),
  };
  return { dir, configPath, config, env, cleanup };
}

function login(s: Setup, target: string, extra: Record<string, string> = { BROWSER: browser }): Promise<CliRun> {
  return runCliAsync(['auth', 'login', target, '--config', s.configPath], { ...s.env, ...extra });
}

async function status(s: Setup): Promise<{ servers: { server: string; signedIn: boolean; expires?: string; scopes?: string[] }[] }> {
  const run = await runCliAsync(['auth', 'status', '--json', '--config', s.configPath], s.env);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as { servers: { server: string; signedIn: boolean; expires?: string; scopes?: string[] }[] };
}

/** open_toolbox's answer; an error result only when `failing` (every server of the toolbox failed). */
async function open(wb: RunningWorkbench, failing = false): Promise<OpenToolboxResult> {
  const result = (await wb.call('open_toolbox', { toolbox_name: 'dev' })) as CallToolResult;
  assert.equal(result.isError === true, failing, textOf(result));
  return result.structuredContent as OpenToolboxResult;
}

/** Waits until the stored access token of `server` has expired (the fixture issues short-lived ones). */
async function untilExpired(s: Setup, server: string): Promise<void> {
  const expires = (await status(s)).servers.find((x) => x.server === server)?.expires;
  assert.ok(expires, 'the sign-in has an expiry');
  assert.ok(await waitFor(() => Date.now() > Date.parse(expires), 30_000), 'the access token expired');
}

describe('OAuth sign-in of remote servers', () => {
  let fixture: OAuthFixture;
  let other: OAuthFixture;
  before(async () => {
    [fixture, other] = await Promise.all([startOAuthFixture({ accessTokenSeconds: 2 }), startOAuthFixture()]);
  });
  after(async () => {
    await Promise.allSettled([fixture?.close(), other?.close()]);
  });

  it('auth login signs in through the browser; the tokens (0600, directory 0700) serve after a restart, refreshed when expired, never logged', async () => {
    const s = await setup({ remote: fixture });
    try {
      const before = fixture.authorizations.length;
      const run = await login(s, 'dev/remote');
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /signed in to dev\/remote \(2 tools\)/);
      assert.match(run.stderr, /if none did, open this URL\): http:\/\/127\.0\.0\.1:\d+\/authorize\?/, 'the URL is printed too');
      assert.equal(fixture.authorizations.length, before + 1);
      const files = await readdir(join(s.dir, 'oauth'));
      assert.equal(files.length, 1);
      assert.equal((await stat(join(s.dir, 'oauth'))).mode & 0o777, 0o700);
      assert.equal((await stat(join(s.dir, 'oauth', files[0]!))).mode & 0o777, 0o600);
      const listed = (await status(s)).servers;
      assert.deepEqual(listed.map((x) => [x.server, x.signedIn, x.scopes]), [['dev/remote', true, ['mcp']]]);

      await untilExpired(s, 'dev/remote');
      const refreshes = fixture.grants.filter((g) => g === 'refresh_token').length;
      // No browser at all: the stored sign-in must do.
      const wb = await startWorkbench(s.config, { args: ['--no-browser'], env: s.env });
      try {
        assert.deepEqual((await open(wb)).servers_failed, []);
        const who = await wb.useTool('dev', 'dev__remote__whoami');
        assert.notEqual(who.isError, true, textOf(who));
        assert.ok(fixture.grants.filter((g) => g === 'refresh_token').length > refreshes, 'the expired access token was refreshed');
        assert.equal(fixture.authorizations.length, before + 1, 'no new browser sign-in');
        const logged = wb.stderr() + run.stderr + run.stdout + (await readFile(join(s.dir, 'browser.log'), 'utf8'));
        for (const token of fixture.issued) assert.ok(!logged.includes(token), 'no token in any output');
      } finally {
        await wb.close();
      }
    } finally {
      await s.cleanup();
    }
  });

  it('serve signs in through the browser to a server without "auth" that answers 401 with a Bearer challenge, and steps up on insufficient_scope', async () => {
    const s = await setup({ remote: other }, undefined);
    try {
      const wb = await startWorkbench(s.config, { env: { ...s.env, BROWSER: browser } });
      try {
        const before = other.authorizations.length;
        const who = await wb.useTool('dev', 'dev__remote__whoami');
        assert.notEqual(who.isError, true, textOf(who));
        assert.deepEqual(JSON.parse(textOf(who)).scopes, ['mcp']);
        assert.equal(other.authorizations.length, before + 1);
        const admin = await wb.useTool('dev', 'dev__remote__admin_echo', { text: 'hi' });
        assert.notEqual(admin.isError, true, textOf(admin));
        assert.equal(textOf(admin), 'admin: hi');
        assert.deepEqual(other.authorizations.at(-1)?.scopes, ['mcp', 'admin'], 'the step-up asked for the union of the scopes');
      } finally {
        await wb.close();
      }
    } finally {
      await s.cleanup();
    }
  });

  it('calls made at once after the access token expired refresh it once and all succeed; the sign-in is kept (rotating refresh tokens)', async () => {
    const s = await setup({ remote: fixture });
    try {
      assert.equal((await login(s, 'dev/remote')).code, 0);
      const wb = await startWorkbench(s.config, { args: ['--no-browser'], env: s.env });
      try {
        assert.deepEqual((await open(wb)).servers_failed, []);
        await untilExpired(s, 'dev/remote');
        const refreshes = fixture.grants.filter((g) => g === 'refresh_token').length;
        const calls = await Promise.all([1, 2, 3, 4, 5].map(() => wb.useTool('dev', 'dev__remote__whoami')));
        for (const call of calls) assert.notEqual(call.isError, true, textOf(call));
        assert.equal(fixture.grants.filter((g) => g === 'refresh_token').length, refreshes + 1, 'one refresh for the five calls');
        assert.doesNotMatch(wb.stderr(), /invalid_grant/);
        const later = await wb.useTool('dev', 'dev__remote__whoami');
        assert.notEqual(later.isError, true, textOf(later));
      } finally {
        await wb.close();
      }
      assert.deepEqual((await status(s)).servers.map((x) => [x.server, x.signedIn]), [['dev/remote', true]], 'still signed in');
    } finally {
      await s.cleanup();
    }
  });

  it('auth login where no browser can be opened prints the URL and waits for the browser to come back', async () => {
    const s = await setup({ remote: fixture });
    try {
      // No $BROWSER, no display: as over SSH or in a container.
      const child = spawn(node, [paths.cli, 'auth', 'login', 'dev/remote', '--config', s.configPath], { env: { PATH: process.env.PATH ?? '', HOME: s.dir, ...s.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      try {
        assert.ok(await waitFor(() => /open this URL in a browser/.test(stderr), 30_000), stderr);
        const url = /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(stderr)?.[1];
        assert.ok(url, stderr);
        assert.match(stderr, /ssh -L (\d+):127\.0\.0\.1:\1 /, 'how to reach the callback from another machine');
        // The person opens it in a browser of their own (not spawnSync: the authorization server runs in this process).
        const opened = spawn(node, [fileURLToPath(new URL('../fixtures/oauth-browser.mjs', import.meta.url)), url], { stdio: 'ignore' });
        assert.equal(await new Promise((resolve) => opened.on('close', resolve)), 0, 'the browser followed the sign-in');
        assert.equal(await exited, 0, stderr);
        assert.match(stdout, /signed in to dev\/remote \(2 tools\)/);
      } finally {
        child.kill('SIGKILL');
      }
      assert.deepEqual((await status(s)).servers.map((x) => [x.server, x.signedIn]), [['dev/remote', true]]);
    } finally {
      await s.cleanup();
    }
  });

  it('calls made at once after the sign-in was revoked share one browser sign-in, and each is answered once it completes', async () => {
    const s = await setup({ remote: fixture });
    try {
      assert.equal((await login(s, 'dev/remote')).code, 0);
      // The person takes a moment in the browser: every call is refused (and asks for a sign-in) before it comes back.
      const wb = await startWorkbench(s.config, { env: { ...s.env, BROWSER: browser, OAUTH_BROWSER_DELAY_MS: '1500' } });
      try {
        assert.deepEqual((await open(wb)).servers_failed, []);
        await untilExpired(s, 'dev/remote');
        fixture.revokeRefreshTokens();
        const opened = (await readFile(s.env.OAUTH_BROWSER_LOG!, 'utf8')).split('\n').filter(Boolean).length;
        const calls = await Promise.allSettled([1, 2, 3].map(() => wb.useTool('dev', 'dev__remote__whoami')));
        for (const call of calls) {
          assert.equal(call.status, 'fulfilled', `a tool result, not a protocol error: ${call.status === 'rejected' ? String(call.reason) + wb.stderr() : ''}`);
          if (call.status === 'fulfilled') assert.notEqual(call.value.isError, true, textOf(call.value));
        }
        const now = (await readFile(s.env.OAUTH_BROWSER_LOG!, 'utf8')).split('\n').filter(Boolean).length;
        assert.equal(now - opened, 1, 'one browser window for the three calls');
        const later = await wb.useTool('dev', 'dev__remote__whoami');
        assert.notEqual(later.isError, true, textOf(later));
      } finally {
        await wb.close();
      }
    } finally {
      await s.cleanup();
    }
  });

  it('--no-browser fails at once naming auth login; a revoked refresh token says the same; two servers keep separate tokens', async () => {
    const s = await setup({ remote: fixture, second: other });
    try {
      const wb = await startWorkbench(s.config, { args: ['--no-browser'], env: { ...s.env, BROWSER: browser } });
      try {
        const opened = await open(wb, true);
        assert.deepEqual(opened.servers_failed.map((f) => [f.server, f.code, f.failure?.kind, f.failure?.signInCommand]).sort(), [
          // The command runs as given: it names the config served (`auth login` uses only a config it is given).
          ['remote', 'SIGN_IN_REQUIRED', 'needs-sign-in', `mcp-workbench auth login dev/remote --config ${wb.configPath}`],
          ['second', 'SIGN_IN_REQUIRED', 'needs-sign-in', `mcp-workbench auth login dev/second --config ${wb.configPath}`],
        ]);
        assert.match(opened.servers_failed[0]!.error, /--no-browser\. Run `mcp-workbench auth login dev\/(remote|second) --config /);
        const call = await wb.useTool('dev', 'dev__remote__whoami');
        assert.equal(workbenchErrorCode(call), 'SIGN_IN_REQUIRED');
      } finally {
        await wb.close();
      }
      const doctor = await runCliAsync(['doctor', '--json', '--config', s.configPath], { ...s.env, BROWSER: browser });
      assert.equal(doctor.code, 1, 'doctor opens no browser: the servers are reported as needing a sign-in');
      const report = JSON.parse(doctor.stdout) as { toolboxes: { servers: { server: string; failure?: { kind: string; summary: string } }[] }[] };
      assert.deepEqual(report.toolboxes[0]!.servers.map((x) => [x.server, x.failure?.kind, x.failure?.summary]), [
        ['remote', 'needs-sign-in', `needs sign-in: run mcp-workbench auth login dev/remote --config ${s.configPath}`],
        ['second', 'needs-sign-in', `needs sign-in: run mcp-workbench auth login dev/second --config ${s.configPath}`],
      ]);
      assert.equal((await login(s, 'dev/remote')).code, 0);
      assert.equal((await login(s, 'dev/second')).code, 0);
      assert.equal((await readdir(join(s.dir, 'oauth'))).length, 2, 'one file per server');
      const bearers = new Set([...fixture.bearerSeen, ...other.bearerSeen].filter(Boolean));
      assert.ok(fixture.bearerSeen.filter(Boolean).every((b) => !other.bearerSeen.includes(b)), 'each token went only to its own server');
      assert.ok(bearers.size >= 2);

      await untilExpired(s, 'dev/remote');
      fixture.revokeRefreshTokens();
      const again = await startWorkbench(s.config, { args: ['--no-browser'], env: s.env });
      try {
        const failed = (await open(again)).servers_failed;
        assert.deepEqual(failed.map((f) => [f.server, f.code]), [['remote', 'SIGN_IN_REQUIRED']], 'the other server still works');
        assert.match(failed[0]!.error, /its sign-in has expired or was revoked.*Run `mcp-workbench auth login dev\/remote --config [^`]+`/s);
      } finally {
        await again.close();
      }
      // logout takes the options login and status take (it needs no config: it also forgets a server no longer in it).
      const out = await runCliAsync(['auth', 'logout', 'dev/second', '--config', s.configPath], s.env);
      assert.equal(out.code, 0, out.stderr);
      assert.equal((await readdir(join(s.dir, 'oauth'))).length, 1);
    } finally {
      await s.cleanup();
    }
  });
});
