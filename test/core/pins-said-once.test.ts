import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseArgsStringToArgv } from 'string-argv';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra } from '../helpers/era-workbench.js';
import { fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';
import { runCliAsync } from '../helpers/cli-run.js';

// Pinned tool definitions (README "Pinned tool definitions"): a tool new since approved is said once in the log. Each
// first sight of another server written to the pins file changes the file, but not what is true of this tool: it is
// not said again when the next session lists its server.

const READ = { name: 'read', description: 'Reads a note.', inputSchema: { type: 'object' } };
const WIPE = { name: 'wipe', description: 'Deletes every note.', inputSchema: { type: 'object' } };
const WARNING = /"notes__s__wipe": new on server "s" since its tools were approved/g;

describe('a warning said once', () => {
  it('stays said once while other servers\' first sights are written (--http, a session each)', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const env = { HOME: dir, WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
      const config = {
        toolboxes: {
          notes: { mcpServers: { s: { ...fixtureServer(), env: { FIXTURE_TOOL_DEFS: JSON.stringify([READ, WIPE]) } } } },
          a: { mcpServers: { x: fixtureServer() } },
          b: { mcpServers: { y: fixtureServer() } },
        },
      };
      const wb = await startEra('http', 'legacy', config, undefined, {}, { env });
      try {
        // notes/s approved without `wipe`: it is new since approved, in every session that lists it.
        const approve = await runCliAsync(['tools', 'approve', 'notes__s__read', '--config', wb.configPath], env);
        assert.equal(approve.code, 0, approve.stderr);
        const pinnedKeys = async (): Promise<string[]> => Object.keys((JSON.parse(await readFile(join(dir, 'tool-pins.json'), 'utf8')) as { servers: object }).servers);
        const said = (): number => (wb.stderr().match(WARNING) ?? []).length;
        /** A session lists notes/s on connections of its own (use_tool waits for its listing), then opens `other`. */
        const session = async (client: Client, other: string): Promise<void> => {
          const used = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'notes', tool_name: 'notes__s__read', arguments: {} } })) as CallToolResult;
          assert.notEqual(used.isError, true, JSON.stringify(used));
          await waitFor(() => said() >= 1, { timeoutMs: 15_000, what: 'the warning' });
          await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: other } });
          const key = `${other}/${other === 'a' ? 'x' : 'y'}`;
          await waitFor(async () => (await pinnedKeys()).includes(key), { timeoutMs: 15_000, what: `the first sight of ${key} written` });
        };
        await session(wb.client, 'a');
        await session(await wb.another({}), 'b');
        // A third session lists notes/s after both writes.
        const third = await wb.another({});
        const used = (await third.callTool({ name: 'use_tool', arguments: { toolbox_name: 'notes', tool_name: 'notes__s__read', arguments: {} } })) as CallToolResult;
        assert.notEqual(used.isError, true, JSON.stringify(used));
        assert.equal(said(), 1, `said once:\n${wb.stderr()}`);
        // The commands it names run as printed: they start servers only from a config named, so it names this one.
        const line = wb.stderr().split('\n').find((l) => l.includes('"notes__s__wipe": new on server')) ?? '';
        const command = /approve: mcp-workbench (.*?)\)\.\s*$/.exec(line)?.[1];
        assert.ok(command?.includes(`--config ${wb.configPath}`), line);
        const approved = await runCliAsync(parseArgsStringToArgv(command ?? ""), env);
        assert.equal(approved.code, 0, approved.stderr);
      } finally {
        await wb.close();
      }
    } finally {
      await cleanup();
    }
  });
});
