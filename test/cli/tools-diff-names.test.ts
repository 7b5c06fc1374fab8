import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { logLines } from '../helpers/log-lines.js';
import { runCliAsync } from '../helpers/cli-run.js';
import { node, tempDir } from '../helpers/workbench-process.js';

// `tools diff TOOLBOX/SERVER` with a name the config does not have (README "Pinned tool definitions", "CLI"): a usage
// error naming what was typed and what exists, before any server is started.

async function withConfig(work: (files: string[], env: Record<string, string>) => Promise<void>): Promise<void> {
  const { dir, cleanup } = await tempDir('wb-diff-names-');
  try {
    const configPath = join(dir, 'workbench-config.json');
    // A server that exits at once: had it been started, its failure would be logged.
    const quits = { command: node, args: ['-e', 'process.exit(0)'] };
    await writeFile(configPath, JSON.stringify({ toolboxes: { dev: { mcpServers: { alpha: quits, beta: quits } }, ops: { mcpServers: { gamma: quits } } } }));
    const env = { HOME: join(dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
    await work(['--config', configPath, '--state-file', join(dir, 'tool-state.json')], env);
  } finally {
    await cleanup();
  }
}

describe('tools diff of a server the config does not have', () => {
  it('an unknown server: exit 2 naming it and the toolbox\'s servers, nothing started', async () => {
    await withConfig(async (files, env) => {
      const run = await runCliAsync(['tools', 'diff', 'dev/alpah', ...files], env);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '');
      assert.deepEqual(logLines(run.stderr).map((l) => l.level), ['error'], run.stderr);
      assert.match(run.stderr, /no server "alpah" in toolbox "dev"/);
      assert.match(run.stderr, /dev\/alpha, dev\/beta/);
      assert.match(run.stderr, /mcp-workbench tools diff dev\/alpha/);
    });
  });

  it('an unknown toolbox: exit 2 naming it and the servers there are, nothing started', async () => {
    await withConfig(async (files, env) => {
      const run = await runCliAsync(['tools', 'diff', 'nope/alpha', ...files], env);
      assert.equal(run.code, 2, run.stderr);
      assert.deepEqual(logLines(run.stderr).map((l) => l.level), ['error'], run.stderr);
      assert.match(run.stderr, /no toolbox "nope"/);
      assert.match(run.stderr, /dev\/alpha, dev\/beta, ops\/gamma/);
      assert.doesNotMatch(run.stderr, /or none for every toolbox/, 'diff needs one server');
    });
  });

  it('a name with more than one slash is a usage error too', async () => {
    await withConfig(async (files, env) => {
      const run = await runCliAsync(['tools', 'diff', 'dev/alpha/x', ...files], env);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /expects \{toolbox\}\/\{server\}/);
    });
  });
});
