import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { eraClient, ERAS } from '../helpers/era-workbench.js';
import { fixtureServer, node, paths, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// README "Catalog cache": a cache folder that exists but cannot be written costs the cache, never a server, and is
// said once — not once per server, refresh and restart, all day long. Root writes anywhere, so as root the workbench
// runs as nobody (setpriv) in a folder nobody owns; as a normal user a 0555 folder is enough.

const NOBODY = 65534;
const root = process.getuid?.() === 0;
const setprivMissing = root && spawnSync('setpriv', ['--version']).status !== 0;
/** As root, whether nobody can run the workbench from this checkout (a clone under a 0700 folder cannot be read). */
const nobodyBlocked =
  root && !setprivMissing && spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', node, paths.cli, '--version']).status !== 0;
const skip = setprivMissing
  ? 'as root it needs setpriv (util-linux)'
  : nobodyBlocked && 'as root it runs the workbench as nobody, who cannot read this checkout (it lies under a folder only its owner may enter)';

/** Gives `dir` (recursively) to nobody when running as root, so the workbench run as nobody can use its files. */
async function forWorkbench(path: string): Promise<void> {
  if (root) await chown(path, NOBODY, NOBODY);
}

for (const era of ERAS) {
  describe(`MCP_WORKBENCH_CACHE_DIR a folder that cannot be written (stdio, ${era} client)`, () => {
    it('every server answers, and the failed writes are said once', { skip, timeout: 120_000 }, async () => {
      const { dir, cleanup } = await tempDir('wb-cache-read-only-');
      const cache = join(dir, 'cache');
      await mkdir(cache, { mode: 0o700 });
      const configPath = join(dir, 'config.json');
      const servers = { one: fixtureServer('--name', 'one', '--list-changed'), two: fixtureServer('--name', 'two'), three: fixtureServer('--name', 'three') };
      await writeFile(configPath, JSON.stringify({ toolboxes: { tb: { mcpServers: servers } } }));
      for (const path of [dir, cache, configPath]) await forWorkbench(path);
      await chmod(dir, 0o755);
      await chmod(cache, 0o555);
      const cli = [node, paths.cli, 'serve', '--config', configPath];
      const [command, ...args] = root ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', ...cli] : cli;
      const transport = new StdioClientTransport({
        command: command!,
        args,
        cwd: dir,
        stderr: 'pipe',
        env: { PATH: process.env.PATH ?? '', HOME: dir, WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'), MCP_WORKBENCH_CACHE_DIR: cache },
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const client: Client = eraClient(era);
      try {
        await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
        const use = async (tool: string, args: Record<string, unknown>): Promise<CallToolResult> =>
          (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: args } })) as CallToolResult;
        const opened = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'tb' } })) as CallToolResult;
        assert.notEqual(opened.isError, true, textOf(opened));
        for (const server of ['one', 'two', 'three']) assert.equal(textOf(await use(`tb__${server}__echo`, { text: server })), server);
        // Each list change and each restart writes the cache again.
        for (const name of ['fresh_a', 'fresh_b']) {
          assert.notEqual((await use('tb__one__add_tool', { name })).isError, true);
          await waitFor(async () => textOf(await use(`tb__one__${name}`, {})) === name, { timeoutMs: 30_000, what: `${name} to be listed` });
        }
        assert.equal((await use('tb__two__crash', {})).isError, true);
        assert.equal(textOf(await use('tb__two__echo', { text: 'again' })), 'again');
        // The workbench's last writes are done or given up once it has exited.
        await client.close();
        await waitFor(() => stderr.includes('shutting down'), { timeoutMs: 30_000, what: 'the workbench to shut down' });
        const said = stderr.split('\n').filter((line) => line.includes(cache));
        assert.equal(said.length, 1, `one line about the cache folder:\n${stderr}`);
        assert.match(said[0]!, /permission denied|EACCES/i, said[0]);
        assert.match(said[0]!, /MCP_WORKBENCH_CACHE_DIR/, 'what to do');
      } finally {
        await client.close().catch(() => {});
        await chmod(cache, 0o755).catch(() => {});
        await cleanup();
      }
    });
  });
}
