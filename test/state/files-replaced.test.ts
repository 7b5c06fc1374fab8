import assert from 'node:assert/strict';
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra, type EraWorkbench } from '../helpers/era-workbench.js';
import { fixtureServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

// The files a running workbench follows — the tool state file (README "Enabled and disabled tools") and tool-pins.json
// (README "Pinned tool definitions") — replaced under it: by a directory (the last good state stays, never re-enabling
// a tool, and the log says once what is wrong, where and what to do), by a symbolic link to another valid file (that
// file is followed), or with their folder deleted and made again with a new valid file (the new file is followed).
// One era over stdio: how a file is followed does not depend on the client.

const READ = { name: 'read', description: 'Reads a note.', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } };
const LIST = { name: 'list', description: 'Lists notes.', inputSchema: { type: 'object' } };
const config = { toolChanges: 'quarantine', toolboxes: { notes: { mcpServers: { s: { ...fixtureServer(), env: { FIXTURE_TOOL_DEFS: JSON.stringify([READ, LIST]) } } } } } };

type Pins = { format: number; servers: Record<string, { approved: string; tools: Record<string, { fingerprint: string }> }> };

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const useTool = (client: Client, tool: string) => call(client, 'use_tool', { toolbox_name: 'notes', tool_name: `notes__s__${tool}`, arguments: tool === 'read' ? { id: '1' } : {} });
const codeOf = async (client: Client, tool: string) => workbenchErrorCode(await useTool(client, tool)) ?? 'ok';

/** The recorded pins with only `approved` of notes/s approved as listed (the others: a fingerprint it no longer has). */
function pinsWith(recorded: Pins, approved: string[]): string {
  const s = structuredClone(recorded.servers['notes/s']!);
  for (const name of ['read', 'list']) if (!approved.includes(name)) s.tools[name]!.fingerprint = 'sha256:not-what-it-lists-now';
  return JSON.stringify({ ...recorded, servers: { 'notes/s': s } }, null, 2);
}

/** Waits until calls of read and list answer `read` and `list` (an error code, or 'ok'). */
async function expectCodes(wb: EraWorkbench, read: string, list: string, what: string): Promise<void> {
  await waitFor(async () => (await codeOf(wb.client, 'read')) === read && (await codeOf(wb.client, 'list')) === list, { timeoutMs: 60_000, what: `${what}:\n${wb.stderr()}` });
}

/** A workbench whose state file and pins file are in `room`, with the first sight of notes/s recorded. */
async function started(dir: string, room: string): Promise<{ wb: EraWorkbench; recorded: Pins }> {
  await mkdir(room, { recursive: true });
  const wb = await startEra('stdio', 'legacy', config, () => {}, {}, { args: ['--state-file', join(room, 'tool-state.json')], env: { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') } });
  await call(wb.client, 'open_toolbox', { toolbox_name: 'notes' });
  const pinsPath = join(room, 'tool-pins.json');
  await waitFor(async () => 'notes/s' in ((JSON.parse(await readFile(pinsPath, 'utf8').catch(() => '{"servers":{}}')) as Pins).servers), {
    timeoutMs: 60_000,
    what: 'the first sight of notes/s to be recorded',
  });
  return { wb, recorded: JSON.parse(await readFile(pinsPath, 'utf8')) as Pins };
}

const linesNaming = (wb: EraWorkbench, text: string): string[] => wb.stderr().split('\n').filter((line) => line.includes(text));

describe('the tool state file replaced while the workbench runs', () => {
  it('by a directory: calls are refused, said once; its folder deleted and made again with a new file: that file is followed', { timeout: 300_000 }, async (t) => {
    const { dir, cleanup } = await tempDir();
    t.after(cleanup);
    const room = join(dir, 'room');
    const statePath = join(room, 'tool-state.json');
    await mkdir(room);
    await writeFile(statePath, JSON.stringify({ enabled: [], disabled: ['notes__s__read'] }));
    const { wb } = await started(dir, room);
    try {
      await expectCodes(wb, 'TOOL_DISABLED', 'ok', 'the state file to disable read');

      await rm(statePath);
      await mkdir(statePath);
      await expectCodes(wb, 'STATE_UNREADABLE', 'STATE_UNREADABLE', 'calls to be refused while a directory is in its place');
      await rm(statePath, { recursive: true });
      await writeFile(statePath, JSON.stringify({ enabled: [], disabled: ['notes__s__read'] }));
      await expectCodes(wb, 'TOOL_DISABLED', 'ok', 'the file put back to apply');
      const told = linesNaming(wb, `${statePath} cannot be read`);
      assert.equal(told.length, 1, `said once:\n${wb.stderr()}`);
      assert.match(told[0]!, /instead of the directory/, 'it says what to do');

      // The folder goes (a dotfiles sync) and comes back with another file: that one is followed.
      const fresh = join(dir, 'room-again');
      await mkdir(fresh);
      await writeFile(join(fresh, 'tool-state.json'), JSON.stringify({ enabled: [], disabled: ['notes__s__list'] }));
      await writeFile(join(fresh, 'tool-pins.json'), await readFile(join(room, 'tool-pins.json')));
      await rm(room, { recursive: true });
      await rename(fresh, room);
      await expectCodes(wb, 'ok', 'TOOL_DISABLED', 'the new file in the new folder to be followed');
    } finally {
      await wb.close();
    }
  });
});

describe('tool-pins.json replaced while the workbench runs', () => {
  it('by a directory: tools are held, said once; by a link to another valid file, or in a folder made again: that file is followed', { timeout: 300_000 }, async (t) => {
    const { dir, cleanup } = await tempDir();
    t.after(cleanup);
    const room = join(dir, 'room');
    const pinsPath = join(room, 'tool-pins.json');
    const { wb, recorded } = await started(dir, room);
    try {
      await expectCodes(wb, 'ok', 'ok', 'both tools approved at first sight');

      // A directory in its place: nothing can be checked, so under quarantine both are held; no first sight is
      // recorded over it, and the log says once what is wrong, where and what to do.
      await rm(pinsPath);
      await mkdir(pinsPath);
      await expectCodes(wb, 'TOOL_HELD', 'TOOL_HELD', 'both tools to be held while a directory is in its place');
      const told = linesNaming(wb, `tool pins file ${pinsPath} is a directory`);
      assert.equal(told.length, 1, `said once:\n${wb.stderr()}`);
      assert.match(told[0]!, /Fix it, or delete it/, 'it says what to do');

      // A link to another valid file (read approved, list not): that file is followed.
      const other = join(dir, 'dotfiles', 'tool-pins.json');
      await mkdir(join(dir, 'dotfiles'));
      await writeFile(other, pinsWith(recorded, ['read']));
      await rm(pinsPath, { recursive: true });
      await symlink(other, pinsPath);
      await expectCodes(wb, 'ok', 'TOOL_HELD', 'the linked file to be followed');

      // The folder goes and comes back with another file (list approved, read not): that one is followed.
      const fresh = join(dir, 'room-again');
      await mkdir(fresh);
      await writeFile(join(fresh, 'tool-pins.json'), pinsWith(recorded, ['list']));
      await rm(room, { recursive: true });
      await rename(fresh, room);
      await expectCodes(wb, 'TOOL_HELD', 'ok', 'the new file in the new folder to be followed');
      assert.ok(textOf(await useTool(wb.client, 'read')).includes('tools approve notes__s__read'), 'the hold says how to approve');
    } finally {
      await wb.close();
    }
  });
});
