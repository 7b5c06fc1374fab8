import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { errorLine } from '../helpers/log-lines.js';
import { runCli, tempDir } from '../helpers/workbench-process.js';
import { fileURLToPath } from 'node:url';

const run = runCli;

describe('command line', () => {
  it('--version prints the package version', () => {
    const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    const { code, stdout } = run(['--version']);
    assert.equal(code, 0);
    assert.equal(stdout.trim(), version);
  });

  it('each tools command\'s --help says what it does with a config it was not given (README "Command line")', () => {
    // approve, diff and list start servers: only from a config named; enable/disable read one found on their own.
    // commander wraps help at the terminal's width: compare with the lines joined.
    const help = (command: string): string => run(['tools', command, '--help']).stdout.replace(/\s+/g, ' ');
    for (const command of ['approve', 'diff', 'list']) {
      const stdout = help(command);
      assert.match(stdout, /required: servers start only from a config you name/, command);
      assert.doesNotMatch(stdout, /workbench-config\.json|name check/, command);
    }
    for (const command of ['enable', 'disable']) assert.match(help(command), /else \.\/workbench-config\.json/, command);
    assert.match(help('disable'), /without --force each name is checked against its servers' tools/);
  });

  it('--help lists the commands', () => {
    const { code, stdout } = run(['--help']);
    assert.equal(code, 0);
    assert.match(stdout, /serve/);
    assert.match(stdout, /validate/);
  });

  it('exits 2 on a usage error', () => {
    const result = run(['validate', '--no-such-option']);
    assert.equal(result.code, 2);
    // commander's own usage error, plain text (README "Command line", Logs): the message is the product
    assert.match(result.stderr, /unknown option '--no-such-option'/);
  });

  it('tools list: --toolbox and --toolset together are a usage error (one would be dropped)', () => {
    const result = run(['tools', 'list', '--toolbox', 'a', '--toolset', 'b', '--config', fileOf('../../workbench-config.example.json')]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /'-t, --toolbox <name>' cannot be used with option '--toolset <name>'/);
  });

  it('exits 2 on a mistyped command instead of serving', () => {
    const result = run(['valdate', '--config', fileOf('../../workbench-config.example.json')]);
    assert.equal(result.code, 2);
    // the message is the product: it must name the mistyped command
    assert.match(result.stderr, /unknown command "valdate"/);
    assert.equal(result.stdout, '');
  });

  it('validate: accepts the shipped example config', () => {
    const { code, stdout } = run(['validate', '--config', fileOf('../../workbench-config.example.json')], { env: { HOME: '/home/someone' } });
    assert.equal(code, 0, stdout);
    assert.match(stdout, /valid \(2 toolbox\(es\), 3 server\(s\)\)/);
  });

  it('validate: finds the config through WORKBENCH_CONFIG, then ./workbench-config.json', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    await writeFile(join(dir, 'workbench-config.json'), JSON.stringify({ toolboxes: { local: { mcpServers: {} } } }));
    await writeFile(join(dir, 'other.json'), JSON.stringify({ toolboxes: { other: { mcpServers: {} } } }));
    assert.match(run(['validate'], { cwd: dir }).stdout, /workbench-config\.json: valid/);
    assert.match(run(['validate'], { cwd: dir, env: { WORKBENCH_CONFIG: join(dir, 'other.json') } }).stdout, /other\.json: valid/);
    assert.match(run(['validate', '--config', join(dir, 'workbench-config.json')], { cwd: dir, env: { WORKBENCH_CONFIG: join(dir, 'other.json') } }).stdout, /workbench-config\.json: valid/);
  });

  it('init, server add, auth status, migrate and validate find the config the same way: WORKBENCH_CONFIG, relative to the start directory', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const options = { cwd: dir, env: { HOME: dir, WORKBENCH_CONFIG: join('conf', 'wb.json') } };
    const written = join(dir, 'conf', 'wb.json');
    const init = run(['init'], options);
    assert.equal(init.code, 0, init.stderr);
    assert.ok(init.stdout.includes(written), init.stdout);
    const added = run(['server', 'add', 'dev', 'fx', '--', 'node', 'x.js'], options);
    assert.equal(added.code, 0, added.stderr);
    assert.match(readFileSync(written, 'utf8'), /"fx": \{/);
    const status = run(['auth', 'status', '--json'], options);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual((JSON.parse(status.stdout) as { servers: unknown[] }).servers, []);
    const migrated = run(['migrate', '--json'], options);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.equal((JSON.parse(migrated.stdout) as { path: string }).path, written);
    assert.ok(run(['validate'], options).stdout.includes(written));
  });

  it('validate: unset variables are a field of the failure, in --json and in the JSON error line', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const file = join(dir, 'vars.json');
    const args = ['${WB_UNSET_ONE}', '${WB_UNSET_TWO}', '${WB_UNSET_ONE}'];
    await writeFile(file, JSON.stringify({ toolboxes: { dev: { mcpServers: { fs: { command: 'node', args } } } } }));
    const json = run(['validate', '--json', '--config', file]);
    assert.equal(json.code, 1, json.stderr);
    const answer = JSON.parse(json.stdout) as { code: string; variables?: string[] };
    assert.deepEqual({ code: answer.code, variables: answer.variables }, { code: 'ENV_MISSING', variables: ['WB_UNSET_ONE', 'WB_UNSET_TWO'] });
    const logged = errorLine(run(['validate', '--config', file], { env: { WORKBENCH_LOG_FORMAT: 'json' } }).stderr);
    assert.deepEqual({ code: logged.fields.code, variables: logged.fields.variables }, { code: 'ENV_MISSING', variables: 'WB_UNSET_ONE, WB_UNSET_TWO' });
  });

  it('validate: unset variables mixed with other problems are still listed, beside a structure error or a server problem', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const structure = join(dir, 'structure.json');
    const unset = { command: 'node', args: ['x'], env: { T: '${WB_UNSET_MIX}' } };
    await writeFile(structure, JSON.stringify({ toolboxes: { dev: { mcpServers: { a: unset, b: { command: 'node', timeoutMs: 'soon' } } } } }));
    const first = JSON.parse(run(['validate', '--json', '--config', structure]).stdout) as { code: string; variables?: string[]; details: string[] };
    assert.equal(first.code, 'CONFIG_INVALID');
    assert.deepEqual(first.variables, ['WB_UNSET_MIX']);
    assert.ok(first.details.includes('toolboxes.dev.mcpServers.a.env.T: ${WB_UNSET_MIX} is not set and has no default'), first.details.join('\n'));
    assert.ok(first.details.some((d) => d.startsWith('toolboxes.dev.mcpServers.b.timeoutMs:')), first.details.join('\n'));
    const servers = join(dir, 'servers.json');
    await writeFile(servers, JSON.stringify({ toolboxes: { dev: { mcpServers: { a: unset, c: { type: 'http', url: 'ftp://x' } } } } }));
    const second = JSON.parse(run(['validate', '--json', '--config', servers]).stdout) as { code: string; variables?: string[]; details: string[] };
    assert.equal(second.code, 'CONFIG_INVALID');
    assert.deepEqual(second.variables, ['WB_UNSET_MIX']);
    assert.equal(second.details.length, 2, second.details.join('\n'));
  });

  it('validate: exits 1 and reports every problem of an invalid config', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ toolboxes: { dev: { mcpServers: { fs: { comand: 'npx' }, mem: { command: 'x', args: ['${NOT_SET_ANYWHERE_WB}'] } } } } }));
    const { code, stderr, stdout } = run(['validate', '--config', file]);
    assert.equal(code, 1);
    assert.equal(stdout, '');
    // the message is the product: it must name the unknown key and the one meant
    assert.match(stderr, /unknown key "comand".*did you mean "command"/);
    const json = run(['validate', '--config', file, '--json']);
    assert.equal(json.code, 1);
    const report = JSON.parse(json.stdout) as { valid: boolean; code: string; details: string[] };
    assert.equal(report.valid, false);
    assert.equal(report.code, 'CONFIG_INVALID');
    assert.ok(report.details.some((d) => d.startsWith('toolboxes.dev.mcpServers.fs: unknown key "comand"')), JSON.stringify(report.details));
  });

  it('validate: a missing config says where it looked and what to do', () => {
    const { code, stderr } = run(['validate', '--config', '/nonexistent/dir/workbench-config.json']);
    assert.equal(code, 1);
    // the message is the product: it must name the path it looked at and what to do
    assert.ok(stderr.includes('/nonexistent/dir/workbench-config.json'), stderr);
    assert.match(stderr, /workbench-config\.example\.json|--config/);
    const json = run(['validate', '--config', '/nonexistent/dir/workbench-config.json', '--json']);
    assert.equal(json.code, 1);
    assert.equal((JSON.parse(json.stdout) as { code: string }).code, 'CONFIG_NOT_FOUND');
  });

  it('validate: a 0.9 dynamic-mode config is refused with the migration pointer', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const file = join(dir, 'old.json');
    await writeFile(file, JSON.stringify({ toolMode: 'dynamic', toolboxes: { dev: { mcpServers: {} } } }));
    const { code, stderr } = run(['validate', '--config', file]);
    assert.equal(code, 1);
    // the code (below) says what was refused; the message is the product: it must point to the migration
    assert.match(stderr, /MIGRATION\.md|mcp-workbench migrate/);
    const json = run(['validate', '--config', file, '--json']);
    assert.equal(json.code, 1);
    assert.equal((JSON.parse(json.stdout) as { code: string }).code, 'CONFIG_DYNAMIC_MODE');
  });
});

function fileOf(relative: string): string {
  return fileURLToPath(new URL(relative, import.meta.url));
}
