import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertIsoTime, logLines } from '../helpers/log-lines.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fixtureServer, runCli, startWorkbench, tempDir } from '../helpers/workbench-process.js';

/**
 * README "Command line", Logs: every stderr log line has an ISO-8601 time and a level; `--log-level debug` logs each
 * call (tool, server, duration, outcome) and never argument values; `--log-format json` writes one object a line.
 */
const config = { toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } };
const SECRET_ARGUMENT = 'argument-value-that-must-never-be-logged';

/** A stdio session that opens the toolbox, makes a good call and a failing one, then ends. Returns its stderr. */
async function session(args: string[]): Promise<string> {
  const wb = await startWorkbench(config, { args });
  try {
    await wb.call('open_toolbox', { toolbox_name: 'tb' });
    assert.equal((await wb.useTool('tb', 'echo', { text: SECRET_ARGUMENT })).isError, undefined);
    assert.equal((await wb.useTool('tb', 'fail', {})).isError, true);
  } finally {
    await wb.close();
  }
  return wb.stderr();
}

describe('logs', () => {
  it('text: every line has a time and a level; debug logs each call without values', async () => {
    const stderr = await session(['--log-level', 'debug']);
    const lines = stderr.split('\n').filter((l) => l.length > 0);
    const logged = logLines(stderr);
    assert.equal(logged.length, lines.length, `every line is a log line:\n${lines.filter((l) => logLines(l).length === 0).join('\n')}`);
    for (const line of logged) assertIsoTime(line.time);
    assert.ok(logged.some((l) => l.level === 'info'));

    const calls = logged.filter((l) => l.level === 'debug' && /^call /.test(l.message));
    assert.ok(calls.some((l) => /tb\/fx\/echo: ok in \d+ ms/.test(l.message)), calls.map((l) => l.message).join('\n'));
    assert.ok(calls.some((l) => /tb\/fx\/fail: tool_error in \d+ ms/.test(l.message)));
    assert.ok(logged.some((l) => /^open tb: ok in \d+ ms/.test(l.message)));
    assert.ok(!stderr.includes(SECRET_ARGUMENT), 'argument values are never logged');
  });

  it('json: one object a line, calls with their fields', async () => {
    const stderr = await session(['--log-level', 'debug', '--log-format', 'json']);
    const lines = stderr.split('\n').filter((l) => l.length > 0);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
    const logged = logLines(stderr);
    assert.equal(logged.length, lines.length);
    for (const line of logged) assertIsoTime(line.time);
    const calls = logged.filter((l) => l.fields.event === 'call').map((l) => l.fields);
    const echo = calls.find((c) => c.tool === 'echo');
    assert.ok(echo, JSON.stringify(calls));
    assert.equal(echo.toolbox, 'tb');
    assert.equal(echo.server, 'fx');
    assert.equal(echo.outcome, 'ok');
    assert.equal(echo.session, 'stdio');
    assert.equal(typeof echo.duration_ms, 'number');
    assert.equal(calls.find((c) => c.tool === 'fail')?.outcome, 'tool_error');
    assert.ok(!stderr.includes(SECRET_ARGUMENT));
  });

  it('info (the default) logs no calls', async () => {
    const logged = logLines(await session([]));
    assert.ok(logged.length > 0);
    assert.equal(logged.some((l) => l.level === 'debug' || l.fields.event === 'call'), false);
  });

  it('other commands log the same way; WORKBENCH_LOG_FORMAT works as --log-format does', () => {
    const text = runCli(['validate', '--config', '/nonexistent/workbench-config.json']);
    assert.equal(text.code, 1);
    const [line] = logLines(text.stderr);
    assert.equal(line?.level, 'error');
    assertIsoTime(line.time);

    const json = runCli(['validate', '--config', '/nonexistent/workbench-config.json'], { env: { WORKBENCH_LOG_FORMAT: 'json' } });
    const parsed = JSON.parse(json.stderr.trim()) as { level: string; time: string; message: string };
    assert.equal(parsed.level, 'error');
    assertIsoTime(parsed.time);
    assert.match(parsed.message, /nonexistent/);
  });

  it('a config that does not parse: the terminal shows the line at fault with a caret, and validate --json gives it as excerpt', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const configPath = join(dir, 'workbench-config.json');
      await writeFile(configPath, '{\n  "toolboxes": { "a": 1 "b": 2 }\n}\n');
      const text = runCli(['validate', '--config', configPath]);
      assert.equal(text.code, 1);
      assert.match(text.stderr, /line 2, column 25: [^\n]*\n {2}2 \| {3}"toolboxes": \{ "a": 1 "b": 2 \}\n {4}\| {25}\^/);
      const json = runCli(['validate', '--config', configPath, '--json']);
      const parsed = JSON.parse(json.stdout) as { code: string; message: string; excerpt?: string };
      assert.equal(parsed.code, 'CONFIG_PARSE');
      assert.match(parsed.excerpt ?? '', /^ {2}2 \| .*"b": 2/);
    } finally {
      await cleanup();
    }
  });

  it('a name with a line break cannot forge a log line', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const configPath = join(dir, 'workbench-config.json');
      await writeFile(configPath, JSON.stringify(config));
      const forged = 'mcp-workbench error: forged';
      const run = runCli(['tools', 'call', 'tb', `echo\n${forged}`, '--config', configPath, '--log-level', 'debug'], { env: { HOME: dir } });
      assert.equal(run.code, 1);
      assert.ok(logLines(run.stderr).some((l) => l.message.startsWith('call tb/')), run.stderr);
      assert.ok(!run.stderr.split('\n').some((l) => l.startsWith(forged)), run.stderr);
    } finally {
      await cleanup();
    }
  });

  it('an unknown level or format is a usage error', () => {
    assert.equal(runCli(['validate', '--log-level', 'loud']).code, 2);
    assert.equal(runCli(['validate', '--log-format', 'xml']).code, 2);
  });
});
