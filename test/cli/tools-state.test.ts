import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ToolStatusReport } from '../../src/core/tool-entry.js';
import { fixtureServer, runCli, startWorkbench, tempDir, workbenchErrorCode } from '../helpers/workbench-process.js';
import { logLines } from '../helpers/log-lines.js';

/**
 * README "Enabled and disabled tools": `tools disable` refuses a name or glob that matches no known tool (with the
 * nearest names; `--force` records it anyway), and `tools enable` of one tool under a disabled glob records an
 * exception, so exactly that tool is callable.
 */
const config = { toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } };

async function setup(): Promise<{ dir: string; env: Record<string, string>; stateFile: string; configPath: string }> {
  const { dir, cleanup } = await tempDir();
  after(cleanup);
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify(config));
  const stateFile = join(dir, 'tool-state.json');
  return { dir, configPath, stateFile, env: { HOME: dir, WORKBENCH_CONFIG: configPath, WORKBENCH_STATE_FILE: stateFile } };
}

/** JSON log lines, so a refusal's facts (code, name, nearest names, server) are read as fields. */
const cli = (args: string[], env: Record<string, string>) => runCli(args, { env: { WORKBENCH_LOG_FORMAT: 'json', ...env } });

describe('tools disable: names that match nothing', () => {
  it('refuses a mistyped name with the nearest ones, and changes nothing', async () => {
    const { env, stateFile } = await setup();
    const run = cli(['tools', 'disable', 'tb__fx__ecoh'], env);
    assert.equal(run.code, 2, run.stderr);
    const [unmatched] = logLines(run.stderr).filter((l) => l.fields.code === 'TOOL_NOT_FOUND');
    assert.equal(unmatched?.fields.name, 'tb__fx__ecoh', run.stderr);
    assert.ok(String(unmatched.fields.nearest).split(', ').includes('tb__fx__echo'), run.stderr);
    assert.equal(existsSync(stateFile), false);
  });

  it('refuses a glob whose server is mistyped, suggesting the corrected glob', async () => {
    const { env, stateFile } = await setup();
    const run = cli(['tools', 'disable', 'tb__fxx__*'], env);
    assert.equal(run.code, 2, run.stderr);
    const [unmatched] = logLines(run.stderr).filter((l) => l.fields.code === 'TOOL_NOT_FOUND');
    assert.equal(unmatched?.fields.name, 'tb__fxx__*', run.stderr);
    assert.ok(String(unmatched.fields.nearest).split(', ').includes('tb__fx__*'), run.stderr);
    assert.equal(existsSync(stateFile), false);
  });

  it('refuses a name in an unknown toolbox, and records it with --force', async () => {
    const { env, stateFile } = await setup();
    assert.equal(cli(['tools', 'disable', 'nobox__x__y'], env).code, 2);
    const forced = cli(['tools', 'disable', '--force', 'nobox__x__y', '--json'], env);
    assert.equal(forced.code, 0, forced.stderr);
    assert.deepEqual((JSON.parse(forced.stdout) as { unknown: string[] }).unknown, ['nobox__x__y']);
    assert.deepEqual(JSON.parse(await readFile(stateFile, 'utf8')), { enabled: [], disabled: ['nobox__x__y'] });
  });

  it('names a server that could not be connected when a name matches nothing', async () => {
    const { dir, env } = await setup();
    const broken = join(dir, 'broken.json');
    await writeFile(broken, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: fixtureServer(), gone: fixtureServer('--crash-on-start', '3') } } } }));
    const run = cli(['tools', 'disable', 'tb__gone__x', '--config', broken], env);
    assert.equal(run.code, 2, run.stderr);
    const lines = logLines(run.stderr);
    assert.ok(lines.some((l) => l.fields.toolbox === 'tb' && l.fields.server === 'gone' && l.fields.code === 'CONNECT_FAILED'), run.stderr);
    // the message is the product: it must name the way out
    assert.match(lines.at(-1)!.message, /--force/);
  });

  it('accepts names and globs that match known tools', async () => {
    const { env, stateFile } = await setup();
    const run = cli(['tools', 'disable', 'tb__fx__echo', 'tb__fx__a*', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(await readFile(stateFile, 'utf8')), { enabled: [], disabled: ['tb__fx__echo', 'tb__fx__a*'] });
  });
});

describe('tools enable under a disabled glob', () => {
  it('records an exception in place (comments kept): exactly that tool becomes callable', async () => {
    const { env, stateFile, configPath } = await setup();
    await writeFile(stateFile, '{\n  // hide the fixture for now\n  "enabled": [],\n  "disabled": ["tb__fx__*"],\n}\n');
    const run = cli(['tools', 'enable', 'tb__fx__echo', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const update = JSON.parse(run.stdout) as { changed: { enabled: string[] }; excepted: { name: string; patterns: string[] }[] };
    assert.deepEqual(update.changed.enabled, ['tb__fx__echo']);
    assert.deepEqual(update.excepted, [{ name: 'tb__fx__echo', patterns: ['tb__fx__*'] }]);
    const text = await readFile(stateFile, 'utf8');
    assert.match(text, /\/\/ hide the fixture for now/);
    assert.match(text, /"disabled": \["tb__fx__\*"\]/);

    const listed = cli(['tools', 'list', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const tools = new Map((JSON.parse(listed.stdout) as ToolStatusReport).tools.map((t) => [t.name, t]));
    assert.equal(tools.get('tb__fx__echo')?.enabled, true);
    assert.equal(tools.get('tb__fx__add')?.disabled_by?.source, 'state');

    const wb = await startWorkbench(config, { args: ['--state-file', stateFile], env: { HOME: env.HOME! } });
    try {
      assert.equal((await wb.useTool('tb', 'tb__fx__echo', { text: 'hi' })).isError, undefined);
      assert.equal(workbenchErrorCode(await wb.useTool('tb', 'tb__fx__add', { a: 1, b: 2 })), 'TOOL_DISABLED');
    } finally {
      await wb.close();
    }

    // Enabling it again changes nothing; disabling it by name removes the exception (the newer wish wins).
    assert.match(cli(['tools', 'enable', 'tb__fx__echo'], env).stdout, /no change/);
    assert.equal(cli(['tools', 'disable', 'tb__fx__echo', '--config', configPath], env).code, 0);
    assert.deepEqual(JSON.parse(await readFile(stateFile, 'utf8').then(stripComment)), { enabled: [], disabled: ['tb__fx__*', 'tb__fx__echo'], exceptions: [] });
  });

  it('enable_tools (management tools) records the same exception, and the tool is callable at once', async () => {
    const { env, stateFile } = await setup();
    await writeFile(stateFile, JSON.stringify({ enabled: [], disabled: ['tb__fx__*'] }));
    const wb = await startWorkbench(config, { args: ['--state-file', stateFile, '--management-tools'], env: { HOME: env.HOME! } });
    try {
      assert.equal(workbenchErrorCode(await wb.useTool('tb', 'tb__fx__echo', { text: 'x' })), 'TOOL_DISABLED');
      const answer = await wb.call('enable_tools', { enable: ['tb__fx__echo'] });
      assert.equal(answer.isError, undefined, JSON.stringify(answer));
      assert.equal((await wb.useTool('tb', 'tb__fx__echo', { text: 'x' })).isError, undefined);
      assert.equal(workbenchErrorCode(await wb.useTool('tb', 'tb__fx__add', { a: 1, b: 2 })), 'TOOL_DISABLED');
    } finally {
      await wb.close();
    }
    assert.deepEqual(JSON.parse(await readFile(stateFile, 'utf8')), { enabled: [], disabled: ['tb__fx__*'], exceptions: ['tb__fx__echo'] });
  });

  it('a glob under a broader disabled glob is not made an exception: it says which pattern keeps it hidden', async () => {
    const { env, stateFile } = await setup();
    await writeFile(stateFile, JSON.stringify({ enabled: [], disabled: ['tb__*'] }));
    const run = cli(['tools', 'enable', 'tb__fx__e*', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const update = JSON.parse(run.stdout) as { stillDisabledBy: { name: string; pattern: string }[]; excepted: unknown[] };
    assert.deepEqual(update.stillDisabledBy, [{ name: 'tb__fx__e*', pattern: 'tb__*' }], 'it says which pattern keeps it hidden');
    assert.deepEqual(update.excepted, []);
    assert.deepEqual(JSON.parse(await readFile(stateFile, 'utf8')), { enabled: [], disabled: ['tb__*'] });
  });

  it('enabling a tool the config disables says it stays disabled and why, not "no change (already so)"', async () => {
    const { env, configPath } = await setup();
    await writeFile(configPath, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: { ...fixtureServer(), disabledTools: ['echo'] } } } } }));
    const run = runCli(['tools', 'enable', 'tb__fx__echo'], { env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /tb__fx__echo stays disabled: .*config.*change it there/i, run.stderr);
    assert.doesNotMatch(run.stdout, /already so/, run.stdout);
    assert.match(run.stdout, /no change in the state file/, run.stdout);
  });

  it('enabling a tool the project file disables says so too (--project names where it is)', async () => {
    const { env, dir } = await setup();
    const project = join(dir, 'repo');
    await mkdir(project);
    await writeFile(join(project, '.mcp-workbench.json'), JSON.stringify({ disabledTools: ['tb__fx__echo'] }));
    const run = runCli(['tools', 'enable', 'tb__fx__echo', '--project', project], { env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /tb__fx__echo stays disabled: .*\.mcp-workbench\.json.*change it there/i, run.stderr);
    assert.doesNotMatch(run.stdout, /already so/, run.stdout);
  });
});

function stripComment(text: string): string {
  return text.replace(/^\s*\/\/.*$/m, '').replace(/,(\s*})/, '$1');
}
