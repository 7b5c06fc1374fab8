import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { everythingServer, fixtureServer, runCli, tempDir } from '../helpers/workbench-process.js';

/**
 * README "Command line": `tools search` and `tools call` try tools without an MCP client, through the same workbench
 * as `serve`, so the same tools are enabled and disabled.
 */
async function setup(state?: unknown): Promise<{ dir: string; env: Record<string, string> }> {
  const { dir, cleanup } = await tempDir();
  after(cleanup);
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } }, demo: { mcpServers: { everything: everythingServer() } } } }));
  const stateFile = join(dir, 'tool-state.json');
  if (state !== undefined) await writeFile(stateFile, JSON.stringify(state));
  return { dir, env: { HOME: dir, WORKBENCH_CONFIG: configPath, WORKBENCH_STATE_FILE: stateFile } };
}

interface SearchJson {
  query: string;
  results: { rank: number; name: string; toolbox: string; server: string; tool: string; summary: string }[];
}

describe('tools search', () => {
  it('prints ranked enabled tools with toolbox, server and a summary', async () => {
    const { env } = await setup();
    const text = runCli(['tools', 'search', 'add', 'two', 'numbers', '--toolbox', 'tb'], { env });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout.split('\n')[0]!, /^\s*1\. tb__fx__add\s+\[tb\/fx\]/);

    const json = runCli(['tools', 'search', 'echo', '--json', '--limit', '3'], { env });
    assert.equal(json.code, 0, json.stderr);
    const answer = JSON.parse(json.stdout) as SearchJson;
    assert.equal(answer.query, 'echo');
    assert.ok(answer.results.length >= 2 && answer.results.length <= 3);
    assert.deepEqual(answer.results.map((r) => r.rank), answer.results.map((_, i) => i + 1));
    const toolboxes = new Set(answer.results.map((r) => r.toolbox));
    assert.ok(toolboxes.has('tb') && toolboxes.has('demo'), 'searched every toolbox');
    for (const r of answer.results) assert.equal(r.name, `${r.toolbox}__${r.server}__${r.tool}`);
  });

  it('prints the hint the model gets: tools only near the query in meaning, or where else to look', async () => {
    const { env } = await setup();
    const near = runCli(['tools', 'search', 'plus', '--toolbox', 'tb'], { env });
    assert.equal(near.code, 0, near.stderr);
    assert.match(near.stdout.split('\n')[0]!, /^\s*1\. tb__fx__add\s/);
    assert.match(near.stdout, /\n\nNo tool here has a word of the query: these are the tools nearest to it in meaning/);
    const json = JSON.parse(runCli(['tools', 'search', 'plus', '--toolbox', 'tb', '--json'], { env }).stdout) as SearchJson & { hint?: string };
    assert.equal(json.results[0]?.name, 'tb__fx__add');
    assert.match(json.hint ?? '', /nearest to it in meaning/);
    const none = runCli(['tools', 'search', 'zzqx', '--toolbox', 'tb'], { env });
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /^No tool matched the query\. Closest names: /);
    const exact = JSON.parse(runCli(['tools', 'search', 'echo', '--toolbox', 'tb', '--json', '--limit', '1'], { env }).stdout) as SearchJson & { hint?: string };
    assert.equal(exact.hint, undefined, 'a match as written carries no hint');
  });

  it('leaves out tools the state file disables', async () => {
    const { env } = await setup({ enabled: [], disabled: ['tb__fx__echo'] });
    const json = runCli(['tools', 'search', 'echo', '--toolbox', 'tb', '--json'], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.equal((JSON.parse(json.stdout) as SearchJson).results.some((r) => r.name === 'tb__fx__echo'), false);
  });

  it('--toolset limits what is found and called, as for serve', async () => {
    const { env, dir } = await setup();
    const withSet = join(dir, 'with-toolset.json');
    await writeFile(withSet, JSON.stringify({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } }, toolsets: { quick: { tools: ['tb__fx__add'] } } }));
    const found = runCli(['tools', 'search', 'echo', 'add', '--config', withSet, '--toolset', 'quick', '--json'], { env });
    assert.equal(found.code, 0, found.stderr);
    assert.deepEqual((JSON.parse(found.stdout) as SearchJson).results.map((r) => r.name), ['tb__fx__add']);
    assert.equal(runCli(['tools', 'call', 'tb', 'echo', '--args', '{"text":"x"}', '--config', withSet, '--toolset', 'quick'], { env }).code, 1);
    assert.equal(runCli(['tools', 'call', 'quick', 'add', '--args', '{"a":1,"b":1}', '--config', withSet, '--toolset', 'quick'], { env }).code, 0);
  });

  it('an unknown toolbox is a usage error', async () => {
    const { env } = await setup();
    assert.equal(runCli(['tools', 'search', 'echo', '--toolbox', 'nope'], { env }).code, 2);
  });
});

describe('tools call', () => {
  it('prints the text of a result (a reference server), or the whole result with --json', async () => {
    const { env, dir } = await setup();
    const text = runCli(['tools', 'call', 'demo', 'echo', '--args', '{"message":"hello there"}'], { env });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /hello there/);

    const argsFile = join(dir, 'args.json');
    await writeFile(argsFile, '{"a": 2, "b": 3}');
    const json = runCli(['tools', 'call', 'tb', 'tb__fx__add', '--args-file', argsFile, '--json'], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual((JSON.parse(json.stdout) as { structuredContent: unknown }).structuredContent, { sum: 5 });
  });

  it('exits 1 when the result is an error: the tool failed, its arguments are invalid, or it is disabled', async () => {
    const { env } = await setup({ enabled: [], disabled: ['tb__fx__pid'] });
    const failed = runCli(['tools', 'call', 'tb', 'fail', '--json'], { env });
    assert.equal(failed.code, 1);
    assert.equal((JSON.parse(failed.stdout) as { isError: boolean }).isError, true);

    assert.equal(runCli(['tools', 'call', 'tb', 'add', '--args', '{"a": 1}'], { env }).code, 1);

    const disabled = runCli(['tools', 'call', 'tb', 'tb__fx__pid', '--json'], { env });
    assert.equal(disabled.code, 1);
    const meta = (JSON.parse(disabled.stdout) as { _meta: Record<string, { code: string }> })._meta;
    assert.equal(meta['mcp-workbench/error']?.code, 'TOOL_DISABLED');
  });

  it('exits 2 for an unknown toolbox (a usage error), naming the toolboxes there are', async () => {
    const { env } = await setup();
    const unknown = runCli(['tools', 'call', 'nosuchbox', 'echo'], { env });
    assert.equal(unknown.code, 2, unknown.stderr);
    // Said once, on stderr, as every usage error is: the person at the terminal is told the command to type, not the
    // model's open_toolbox.
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /Unknown toolbox "nosuchbox"\. Available toolboxes: tb, demo\. `mcp-workbench tools list --config [^`]+` shows every toolbox and tool/);
    assert.doesNotMatch(unknown.stderr, /open_toolbox/);
  });

  it('refuses arguments that are not one JSON object, before starting anything', async () => {
    const { env, dir } = await setup();
    await writeFile(join(dir, 'list.json'), '[1]');
    for (const args of [['--args', '{a:1}'], ['--args', '[1]'], ['--args', '{}', '--args-file', join(dir, 'x.json')], ['--args-file', join(dir, 'list.json')]]) {
      const run = runCli(['tools', 'call', 'tb', 'echo', ...args], { env });
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(run.stdout, '');
    }
    // A file that cannot be read is exit 1, as for --config and --state-file (README "Command line", exit codes); said
    // in words, with what to do instead, and nothing started.
    for (const file of [join(dir, 'missing.json'), dir]) {
      const unreadable = runCli(['tools', 'call', 'tb', 'echo', '--args-file', file], { env });
      assert.equal(unreadable.code, 1, `${file}: ${unreadable.stderr}`);
      assert.equal(unreadable.stdout, '');
    }
    const missing = runCli(['tools', 'call', 'tb', 'echo', '--args-file', join(dir, 'missing.json')], { env });
    assert.match(missing.stderr, /cannot read --args-file \S*missing\.json: there is no such file or directory\. .*--args '\{/);
    assert.doesNotMatch(missing.stderr, /ENOENT/);
  });
});
