import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { fixtureServer, tempDir, textOf } from '../helpers/workbench-process.js';

// README "Catalog cache": a cache folder that cannot be made (here a file stands where one of its parent folders
// should be: root may write anywhere, so a mode would not stop it) turns the cache off. The workbench serves every
// server as if nothing were cached and says so once, naming what blocks the folder — not once per server and file,
// and not "delete it, or make it a file you can read" about files that cannot exist.

const combos: [Over, EraName][] = [['stdio', 'legacy'], ['stdio', 'modern'], ['http', 'modern']];
describe('MCP_WORKBENCH_CACHE_DIR under a file', () => {
  for (const [over, era] of combos) {
    it(`serves every server, restarts included, and says once that the cache is off (${over}, ${era} client)`, async () => {
      const { dir, cleanup } = await tempDir('wb-cache-blocked-');
      const blocker = join(dir, 'a-file');
      await writeFile(blocker, 'not a folder\n');
      const config = { toolboxes: { tb: { mcpServers: { one: fixtureServer('--name', 'one'), two: fixtureServer('--name', 'two'), three: fixtureServer('--name', 'three') } } } };
      const wb = await startEra(over, era, config, undefined, {}, { env: { MCP_WORKBENCH_CACHE_DIR: join(blocker, 'cache') } });
      try {
        const use = async (tool: string, args: Record<string, unknown>): Promise<CallToolResult> =>
          (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: args } })) as CallToolResult;
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'tb' } })) as CallToolResult;
        assert.notEqual(opened.isError, true, textOf(opened));
        for (const server of ['one', 'two', 'three']) assert.equal(textOf(await use(`tb__${server}__echo`, { text: server })), server);
        // A crash: the next call starts the server again, which reads and writes its cache files again.
        assert.equal((await use('tb__two__crash', {})).isError, true);
        assert.equal(textOf(await use('tb__two__echo', { text: 'again' })), 'again');
        await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'tb' } });
        const said = wb.stderr().split('\n').filter((line) => line.includes('cache'));
        assert.equal(said.length, 1, `one line about the cache:\n${wb.stderr()}`);
        assert.ok(said[0]!.includes(`${blocker} is a file, not a folder`), said[0]);
        assert.ok(said[0]!.includes(`move or rename the file ${blocker}, or set MCP_WORKBENCH_CACHE_DIR`), said[0]);
        assert.doesNotMatch(said[0]!, /make it a file you can read/);
      } finally {
        await wb.close();
        await cleanup();
      }
    });
  }
});
