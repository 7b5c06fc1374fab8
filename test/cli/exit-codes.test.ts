import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dirPerTest, runCliAsync } from '../helpers/cli-run.js';
import { errorLine } from '../helpers/log-lines.js';
import { fixtureServer, node } from '../helpers/workbench-process.js';

// README "Command line": exit 0 success, 1 failure, 2 usage error — a name the user typed that the config does not
// have, or an argument of the wrong shape, is a usage error for every command, naming what there is instead.

const own = dirPerTest('wb-exit-codes-');

/** A config with one stdio server (never started by these commands) and one remote server; its path and env. */
async function setUp(): Promise<{ config: string; env: Record<string, string>; files: string[] }> {
  const config = join(own.dir, 'workbench-config.json');
  const quits = { command: node, args: ['-e', 'process.exit(0)'] };
  await writeFile(config, JSON.stringify({ toolboxes: { dev: { mcpServers: { local: quits, remote: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } } } }));
  const env = { HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache') };
  return { config, env, files: ['--config', config, '--state-file', join(own.dir, 'tool-state.json')] };
}

describe('usage errors exit 2 for every command', () => {
  it('auth login of a server the config does not have: exit 2, naming the remote servers there are', async () => {
    const { env, files } = await setUp();
    for (const target of ['nope/remote', 'dev/nope', 'devremote']) {
      const run = await runCliAsync(['auth', 'login', target, ...files], env);
      assert.equal(run.code, 2, `${target}: ${run.stderr}`);
      assert.match(run.stderr, /remote servers: dev\/remote/);
    }
  });

  it('auth login of a stdio server: exit 2, naming the remote servers there are', async () => {
    const { env, files } = await setUp();
    const run = await runCliAsync(['auth', 'login', 'dev/local', ...files], env);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /dev\/local is a stdio server/);
    assert.match(run.stderr, /dev\/remote/);
  });

  it('auth logout of a malformed or never signed-in name: exit 2', async () => {
    const { env, config } = await setUp();
    const malformed = await runCliAsync(['auth', 'logout', 'devremote', '--config', config], env);
    assert.equal(malformed.code, 2, malformed.stderr);
    assert.match(malformed.stderr, /<toolbox>\/<server>/);
    const unknown = await runCliAsync(['auth', 'logout', 'dev/remote', '--config', config], env);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /mcp-workbench auth status/);
  });

  it('server remove from a toolbox the config does not have: exit 2 like an unknown server, nothing written', async () => {
    const { env, config } = await setUp();
    const before = await readFile(config, 'utf8');
    const toolbox = await runCliAsync(['server', 'remove', 'nope', 'local', '--config', config], env);
    assert.equal(toolbox.code, 2, toolbox.stderr);
    assert.match(toolbox.stderr, /no toolbox "nope" \(toolboxes: dev\)/);
    const server = await runCliAsync(['server', 'remove', 'dev', 'nope', '--config', config], env);
    assert.equal(server.code, 2, server.stderr);
    assert.equal(await readFile(config, 'utf8'), before);
  });

  it('a config that cannot be read is a failure, not a usage error: exit 1', async () => {
    const { env } = await setUp();
    const run = await runCliAsync(['server', 'remove', 'dev', 'local', '--config', join(own.dir, 'missing.json')], env);
    assert.equal(run.code, 1, run.stderr);
  });
});

/** A config whose one server is the fixture (started by commands that list tools) and one toolset; its path and env. */
async function withFixture(): Promise<{ env: Record<string, string>; files: string[]; dir: string }> {
  const config = join(own.dir, 'fixture-config.json');
  await writeFile(config, JSON.stringify({ toolboxes: { dev: { mcpServers: { fx: fixtureServer() } } }, toolsets: { quick: { tools: ['dev__fx__echo'] } } }));
  const env = { HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache'), WORKBENCH_LOG_FORMAT: 'json' };
  return { env, dir: own.dir, files: ['--config', config, '--state-file', join(own.dir, 'tool-state.json')] };
}

describe('a name that matches nothing is a usage error (exit 2)', () => {
  it('tools approve of a name or glob that matches no listed tool: exit 2, nothing approved', async () => {
    const { env, files, dir } = await withFixture();
    for (const pattern of ['dev__fx__nope', 'nope__*']) {
      const run = await runCliAsync(['tools', 'approve', pattern, ...files], env);
      assert.equal(run.code, 2, `${pattern}: ${run.stderr}`);
      const error = errorLine(run.stderr);
      assert.equal(error.fields.code, 'USAGE', run.stderr);
      // the message is the product: it must name the pattern and where the names are
      assert.ok(error.message.includes(`"${pattern}"`) && error.message.includes('mcp-workbench tools list'), run.stderr);
    }
    await assert.rejects(readFile(join(dir, 'tool-pins.json'), 'utf8'), { code: 'ENOENT' }, 'no pins file written');
  });

  it('--toolset naming a toolset the config does not define: exit 2 naming the toolsets there are (serve, tools search, tools call)', async () => {
    const { env, files } = await withFixture();
    for (const args of [['serve'], ['tools', 'search', 'echo'], ['tools', 'call', 'dev', 'echo']]) {
      const run = await runCliAsync([...args, ...files, '--toolset', 'nope'], env);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      const error = errorLine(run.stderr);
      assert.equal(error.fields.code, 'USAGE', run.stderr);
      // the message is the product: it must name the toolset typed and the ones there are
      assert.match(error.message, /"nope".*toolsets: quick/, run.stderr);
    }
  });

  it('tools enable and disable of a word that is not a tool name, or of a meta-tool: exit 2, nothing written', async () => {
    const { env, files, dir } = await withFixture();
    for (const action of ['enable', 'disable']) {
      const word = await runCliAsync(['tools', action, 'foo', ...files], env);
      assert.equal(word.code, 2, `${action} foo: ${word.stderr}`);
      assert.equal(errorLine(word.stderr).fields.code, 'USAGE', word.stderr);
      // the message is the product: it must name the word and offer the glob meant
      assert.match(errorLine(word.stderr).message, /"foo".*foo__\*/s, word.stderr);
      const meta = await runCliAsync(['tools', action, 'use_tool', ...files], env);
      assert.equal(meta.code, 2, `${action} use_tool: ${meta.stderr}`);
      assert.equal(errorLine(meta.stderr).fields.code, 'USAGE', meta.stderr);
      assert.match(errorLine(meta.stderr).message, /use_tool.*protected/, meta.stderr);
    }
    await assert.rejects(readFile(join(dir, 'tool-state.json'), 'utf8'), { code: 'ENOENT' }, 'no state file written');
  });
});

describe('a usage error a command finds itself ends through the one path: exit 2, its code in the error line', () => {
  it('serve with a mistyped command or option, or an address it must not serve on; tools call with arguments that are not JSON', async () => {
    const { env, files } = await withFixture();
    const cases: [string[], RegExp][] = [
      [['valdate', ...files], /unknown command "valdate" \(did you mean "validate"\?\)/],
      [['serve', '--htp', '3000', ...files], /unknown option "--htp" \(did you mean "--http"\?\)/],
      [['serve', '--http', '0.0.0.0:0', ...files], /refusing to serve on 0\.0\.0\.0 without a token.*WORKBENCH_TOKEN/],
      [['tools', 'call', 'dev', 'echo', '--args', '{bad', ...files], /--args is not valid JSON/],
      [['tools', 'call', 'dev', 'echo', '--args', '[]', ...files], /--args must be a JSON object/],
    ];
    for (const [args, message] of cases) {
      const run = await runCliAsync(args, env);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      const error = errorLine(run.stderr);
      assert.equal(error.fields.code, 'USAGE', `${args.join(' ')}: ${run.stderr}`);
      // the message is the product: it must name what was wrong and what to do
      assert.match(error.message, message, run.stderr);
    }
  });
});

describe('tools enable and disable --force with a config named that cannot be read', () => {
  for (const how of ['--config', 'WORKBENCH_CONFIG'] as const) {
    it(`named by ${how}: exit 1 naming the file and what to do, the state file untouched`, async () => {
      const { env } = await setUp();
      const missing = join(own.dir, 'no-such-config.json');
      const state = join(own.dir, 'tool-state.json');
      for (const args of [['enable', 'dev__local__echo'], ['disable', '--force', 'dev__local__echo']]) {
        const named = how === '--config' ? ['--config', missing] : [];
        const run = await runCliAsync(['tools', ...args, ...named, '--state-file', state], how === '--config' ? env : { ...env, WORKBENCH_CONFIG: missing });
        assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
        assert.equal(run.stdout, '');
        assert.match(run.stderr, /no-such-config\.json/);
        assert.match(run.stderr, /nothing was changed/i);
        await assert.rejects(readFile(state, 'utf8'), { code: 'ENOENT' }, 'no state file written');
      }
    });
  }

  it('no config named and none in the start directory: the state file changes as before (names not checked)', async () => {
    const { env } = await setUp();
    const state = join(own.dir, 'tool-state.json');
    const run = await runCliAsync(['tools', 'disable', '--force', 'dev__local__echo', '--state-file', state], env, { cwd: join(own.dir, 'home') });
    assert.equal(run.code, 0, run.stderr);
    assert.match(await readFile(state, 'utf8'), /dev__local__echo/);
  });
});
