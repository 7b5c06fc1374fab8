import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { parse } from 'jsonc-parser';
import { spawnSync } from 'node:child_process';
import { fixtureServer, node, paths, runCli, tempDir } from '../helpers/workbench-process.js';
import { errorLine } from '../helpers/log-lines.js';

/** `init`, `server add`, `server remove` through the built CLI (README "Command line"). */

let dir: string;
let config: string;
let cleanup: (() => Promise<void>) | undefined;
beforeEach(async () => {
  const temp = await tempDir('wb-setup-');
  cleanup = temp.cleanup;
  dir = temp.dir;
  config = join(dir, 'workbench-config.json');
});
afterEach(() => cleanup?.());

const run = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: dir, env: { HOME: dir, ...env } });

type Doc = { toolboxes: Record<string, { description?: string; mcpServers: Record<string, Record<string, unknown>> }> };
const read = async (): Promise<Doc> => parse(await readFile(config, 'utf8')) as Doc;

describe('init', () => {
  it('writes a commented starter config that validates, and never replaces a file without --force', async () => {
    const created = run(['init']);
    assert.equal(created.code, 0, created.stderr);
    const text = await readFile(config, 'utf8');
    assert.match(text, /^\s*\/\/ /m, 'it has // comments');
    const validate = run(['validate', '--config', config]);
    assert.equal(validate.code, 0, validate.stderr);
    // The command to serve it names the config (servers start only from a named one) and works as printed.
    assert.ok(created.stdout.includes(`Serve it:       mcp-workbench --config ${config}`), created.stdout);

    await writeFile(config, '{ "toolboxes": {} } // mine\n');
    const again = run(['init']);
    assert.equal(again.code, 1);
    assert.equal(await readFile(config, 'utf8'), '{ "toolboxes": {} } // mine\n');

    const forced = run(['init', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(await readFile(config, 'utf8'), text);
    const backups = (await readdir(dir)).filter((f) => f.startsWith('workbench-config.json.bak-'));
    assert.equal(backups.length, 1);
    assert.equal(await readFile(join(dir, backups[0]!), 'utf8'), '{ "toolboxes": {} } // mine\n');
  });

  it('the README\'s "Set up in two commands" runs as written on the config init wrote (every line but migrate, which reads a client\'s file)', async () => {
    const readme = await readFile(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const block = /\*\*Set up in two commands\.\*\*[^]*?```bash\n([^]*?)```/.exec(readme);
    assert.ok(block, 'README has the "Set up in two commands" block');
    const lines = block[1]!.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line.startsWith('mcp-workbench ') && !line.startsWith('mcp-workbench migrate'));
    assert.ok(lines.length >= 3, lines.join('\n'));
    for (const line of lines) {
      // Each line is a shell command: run it with `mcp-workbench` being the built CLI.
      const shell = spawnSync('bash', ['-c', `mcp-workbench() { ${JSON.stringify(node)} ${JSON.stringify(paths.cli)} "$@"; }\n${line}`], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir }, encoding: 'utf8' });
      assert.equal(shell.status, 0, `${line}\n${shell.stdout}${shell.stderr}`);
    }
    const validated = run(['validate'], { DOCS_TOKEN: 'the-docs-token' });
    assert.equal(validated.code, 0, validated.stdout + validated.stderr);
  });

  it('--config PATH writes there, creating its folder', async () => {
    const path = join(dir, 'nested', 'wb.jsonc');
    const created = run(['init', '--config', path]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(run(['validate', '--config', path]).code, 0);
    assert.deepEqual(await readdir(dir), ['nested']);
  });
});

describe('server add / remove', () => {
  const userConfig = `{
  // my servers
  "toolboxes": {
    "dev": {
      "description": "mine",   // keep this note
      "mcpServers": {
        "b-server": { "command": "node", "args": ["b.js"] },
        "a-server": { "command": "node", "args": ["a.js"] }, // and this one
      },
    },
  },
}
`;

  it('adds a stdio server after --, keeping comments, order and formatting; the server then answers tools call', async () => {
    await writeFile(config, userConfig);
    const fx = fixtureServer();
    const added = run(['server', 'add', 'dev', 'fx', '--env', 'GREETING=hi=there', '--', fx.command, ...fx.args]);
    assert.equal(added.code, 0, added.stderr);
    const text = await readFile(config, 'utf8');
    for (const kept of ['// my servers', '"description": "mine",   // keep this note', '"b-server": { "command": "node", "args": ["b.js"] },', '// and this one']) {
      assert.ok(text.includes(kept), `kept: ${kept}`);
    }
    const doc = await read();
    assert.deepEqual(Object.keys(doc.toolboxes.dev!.mcpServers), ['b-server', 'a-server', 'fx']);
    assert.deepEqual(doc.toolboxes.dev!.mcpServers.fx, { command: fx.command, args: fx.args, env: { GREETING: 'hi=there' } });

    await writeFile(config, text.replace(/"b-server"[^\n]*\n/, '').replace(/"a-server"[^\n]*\n/, ''));
    const called = run(['tools', 'call', 'dev', 'echo', '--args', '{"text":"added!"}', '--config', config, '--state-file', join(dir, 'state.json')]);
    assert.equal(called.code, 0, called.stderr);
    assert.match(called.stdout, /added!/);
  });

  it('adds a remote server with --url and --header, creating the toolbox; the type follows the URL', async () => {
    await writeFile(config, userConfig);
    const sse = run(['server', 'add', 'web', 'legacy', '--url', 'https://legacy.example.com/sse', '--description', 'Remote']);
    assert.equal(sse.code, 0, sse.stderr);
    const http = run(['server', 'add', 'web', 'docs', '--url', 'https://docs.example.com/mcp', '--header', 'Authorization: Bearer ${DOCS_TOKEN}']);
    assert.equal(http.code, 0, http.stderr);
    const doc = await read();
    assert.deepEqual(Object.keys(doc.toolboxes), ['dev', 'web']);
    assert.equal(doc.toolboxes.web!.description, 'Remote');
    assert.deepEqual(doc.toolboxes.web!.mcpServers, {
      legacy: { type: 'sse', url: 'https://legacy.example.com/sse' },
      docs: { type: 'http', url: 'https://docs.example.com/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } },
    });
    assert.ok((await readFile(config, 'utf8')).includes('// and this one'));
    assert.equal(run(['validate', '--config', config], { DOCS_TOKEN: 't' }).code, 0);
    // a command that is not installed here is added, and said so (validate would list it)
    const missing = run(['server', 'add', 'dev', 'notyet', '--', 'mcp-workbench-not-installed-cmd', '--flag']);
    assert.equal(missing.code, 0, missing.stderr);
    assert.match(missing.stdout, /toolboxes\.dev\.mcpServers\.notyet\.command: "mcp-workbench-not-installed-cmd" was not found on the PATH the server starts with/);
    assert.ok((await read()).toolboxes.dev!.mcpServers.notyet);
    assert.doesNotMatch(run(['server', 'add', 'dev', 'withnode', '--', 'node', 'x.js']).stdout, /not found/);
    await writeFile(config, (await readFile(config, 'utf8')).replace(/\s*"notyet": \{[^}]*\},?/, '').replace(/\s*"withnode": \{[^}]*\},?/, ''));
    // each add names the unset variables of the server it added, never another server's
    assert.match(http.stdout, /set DOCS_TOKEN where the workbench runs/);
    const plain = run(['server', 'add', 'web', 'plain', '--url', 'https://plain.example.com/mcp']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.doesNotMatch(plain.stdout, /DOCS_TOKEN|set .* where the workbench runs/);
  });

  it('refuses a name that exists, bad names and mixed forms (exit 2), and a missing config (exit 1), writing nothing', async () => {
    await writeFile(config, userConfig);
    for (const args of [
      ['server', 'add', 'dev', 'a-server', '--', 'node', 'x.js'],
      ['server', 'add', 'dev', 'bad__name', '--', 'node', 'x.js'],
      ['server', 'add', 'dev', 'x', '--url', 'https://x.example.com/mcp', '--', 'node'],
      ['server', 'add', 'dev', 'x'],
      ['server', 'add', 'dev', 'x', '--env', 'NOEQUALS', '--', 'node'],
      ['server', 'remove', 'dev', 'nope'],
    ]) {
      const result = run(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    }
    assert.equal(await readFile(config, 'utf8'), userConfig);
    const missing = run(['server', 'add', '--config', join(dir, 'none.json'), 'dev', 'x', '--', 'node'], { WORKBENCH_LOG_FORMAT: 'json' });
    assert.equal(missing.code, 1);
    assert.equal(errorLine(missing.stderr).fields.code, 'CONFIG_NOT_FOUND');
    // the message is the product: it must name the command that creates a config
    assert.match(errorLine(missing.stderr).message, /mcp-workbench init/);
  });

  it('removes a server, keeping the rest of the file as it was', async () => {
    await writeFile(config, userConfig);
    const removed = run(['server', 'remove', 'dev', 'b-server']);
    assert.equal(removed.code, 0, removed.stderr);
    const text = await readFile(config, 'utf8');
    assert.equal(text, userConfig.replace('        "b-server": { "command": "node", "args": ["b.js"] },\n', ''));
    assert.equal(run(['server', 'remove', 'nobox', 'x']).code, 2, 'an unknown toolbox is a usage error, as an unknown server is');
    assert.deepEqual((await readdir(dir)).filter((f) => f.includes('.bak-')), []);
  });
});
