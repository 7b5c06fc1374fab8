import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dirPerTest, runCliAsync } from '../helpers/cli-run.js';
import { fixtureServer } from '../helpers/workbench-process.js';

/**
 * An error that tells a person which command to run next names one that works as printed: the commands that list
 * tools need the config named (README "Use it from your MCP client", `CONFIG_NOT_NAMED`), so the hint carries it.
 */

const own = dirPerTest('wb-next-commands-');

const run = (args: string[]) =>
  runCliAsync(args, { HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache'), WORKBENCH_STATE_FILE: join(own.dir, 'state.json') }, { cwd: own.dir });

async function writeConfig(): Promise<string> {
  const config = join(own.dir, 'workbench-config.json');
  const toolsets = { quick: { description: 'the echo tool', tools: ['fx__f__echo'] } };
  await writeFile(config, JSON.stringify({ toolboxes: { fx: { mcpServers: { f: fixtureServer() } } }, toolsets }));
  return config;
}

/** The `mcp-workbench tools list …` an error names, run as printed (its words split at spaces: temp paths have none). */
async function runSuggestedList(stderr: string): Promise<{ command: string; code: number | null; stderr: string }> {
  const command = /`mcp-workbench (tools list[^`]*)`|"mcp-workbench (tools list[^"]*)"/.exec(stderr);
  assert.ok(command, `no tools list command in: ${stderr}`);
  const words = (command[1] ?? command[2]!).split(' ');
  const result = await run(words);
  return { command: words.join(' '), code: result.code, stderr: result.stderr };
}

describe('commands an error says to run next', () => {
  // The same refusals through use_tool keep the model's advice (test/core/error-model.test.ts): "Call open_toolbox …".
  const refusals: [string, string[]][] = [
    ['tools disable of a name that matches nothing', ['tools', 'disable', 'fx__f__ech']],
    ['tools approve of a glob that matches nothing', ['tools', 'approve', 'zz*']],
    ['tools search with --disabled-tools that hides nothing', ['tools', 'search', 'echo', '--disabled-tools', 'echo']],
    ['tools list --toolset of a toolset the config lacks', ['tools', 'list', '--toolset', 'nope']],
    ['tools search --toolbox of a toolbox the config lacks', ['tools', 'search', 'echo', '--toolbox', 'nope']],
  ];
  for (const [what, args] of refusals) {
    it(`${what} names a tools list that runs, not open_toolbox`, async () => {
      const config = await writeConfig();
      const result = await run([...args, '--config', config]);
      assert.equal(result.code, 2, result.stderr);
      assert.doesNotMatch(result.stderr, /open_toolbox/);
      const next = await runSuggestedList(result.stderr);
      assert.equal(next.code, 0, `${next.command}: ${next.stderr}`);
    });
  }

  for (const [where, tool] of [['fx', 'nosuch'], ['fx', 'fx__zz__echo'], ['quick', 'nosuch']] as const) {
    it(`tools call ${where} ${tool} (a name it does not have) names a tools list that runs, not open_toolbox`, async () => {
      const config = await writeConfig();
      const result = await run(['tools', 'call', where, tool, '--config', config]);
      assert.equal(result.code, 1, result.stderr);
      assert.doesNotMatch(result.stdout, /open_toolbox/);
      const next = await runSuggestedList(result.stdout);
      assert.equal(next.code, 0, `${next.command}: ${next.stderr}`);
    });
  }
});
