import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { link, open, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { errnoCode } from '../../src/shared/errno.js';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { fixtureServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

// A running workbench both writes tool-pins.json (the first sight of a server, README "Pinned tool definitions") and
// follows it (an approval from `tools approve` or an edit applies within a second). A read of the file that began
// before its own write holds content older than what the workbench applied with that write: it must never be put
// back over the newer (a tool just approved would be held again, or every tool held by a broken spell already fixed).

const READ = { name: 'read', description: 'Reads a note.', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } };
const LIST = { name: 'list', description: 'Lists notes.', inputSchema: { type: 'object' } };
const defs = (tools: object[]) => ({ ...fixtureServer(), env: { FIXTURE_TOOL_DEFS: JSON.stringify(tools) } });
const config = {
  toolChanges: 'quarantine',
  toolboxes: { notes: { mcpServers: { s: defs([READ, LIST]) } }, other: { mcpServers: { o: defs([]) } } },
};

type Pins = { format: number; servers: Record<string, { approved: string; tools: Record<string, { fingerprint: string }> }> };

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const useTool = (client: Client, tool: string) => call(client, 'use_tool', { toolbox_name: 'notes', tool_name: `notes__s__${tool}`, arguments: tool === 'read' ? { id: '1' } : {} });
const held = async (client: Client, tool: string) => workbenchErrorCode(await useTool(client, tool)) === 'TOOL_HELD';

/** The pins with these tools of notes/s approved as listed (`approved`) and the others not (a wrong fingerprint). */
function pinsWith(recorded: Pins, approved: string[]): Pins {
  const s = structuredClone(recorded.servers['notes/s']!);
  for (const name of ['read', 'list']) if (!approved.includes(name)) s.tools[name]!.fingerprint = 'sha256:not-what-it-lists-now';
  return { ...recorded, servers: { ...recorded.servers, 'notes/s': s } };
}

/** Replaces `path` at once, as `tools approve` and most editors do (a temp file renamed over it). */
async function replaceWith(path: string, content: string): Promise<void> {
  await writeFile(`${path}.tmp`, content);
  await rename(`${path}.tmp`, path);
}

/**
 * Puts a FIFO in place of the pins file and resolves once the workbench's watcher is reading it: the read then lasts
 * until the test ends it (the race seen under load, made certain). Returns how to end it with `content`.
 */
async function stalledRead(dir: string, pinsPath: string): Promise<(content: string) => Promise<void>> {
  const fifo = join(dir, 'pins-fifo');
  execFileSync('mkfifo', [fifo]);
  await link(fifo, `${fifo}-kept`);
  await rename(fifo, pinsPath);
  let writer: Awaited<ReturnType<typeof open>> | undefined;
  // A writer can open a FIFO without waiting only once a reader has it open: the watcher is then reading it.
  await waitFor(
    async () => {
      writer = await open(`${fifo}-kept`, constants.O_WRONLY | constants.O_NONBLOCK).catch((error: unknown) => {
        if (errnoCode(error) === 'ENXIO') return undefined;
        throw error;
      });
      return writer !== undefined;
    },
    { timeoutMs: 60_000, what: "the workbench's watcher to read the pins file" },
  );
  return async (content) => {
    await writer!.write(content);
    await writer!.close();
  };
}

for (const over of ['stdio', 'http'] as const) {
  for (const era of ERAS) {
    describe(`tool-pins.json: the workbench's own write and a read begun before it (${over}, ${era})`, () => {
      it('never puts the older content back: an approved tool stays callable, a fixed file is not broken again', { timeout: 300_000 }, async (t) => {
        const { dir, cleanup } = await tempDir();
        t.after(cleanup);
        const statePath = join(dir, 'tool-state.json');
        const pinsPath = join(dir, 'tool-pins.json');
        const wb = await startEra(over, era, config, () => {}, {}, { args: ['--state-file', statePath], env: { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') } });
        try {
          // First sight of notes/s is recorded by the workbench itself.
          await call(wb.client, 'open_toolbox', { toolbox_name: 'notes' });
          await waitFor(async () => 'notes/s' in ((JSON.parse(await readFile(pinsPath, 'utf8').catch(() => '{"servers":{}}')) as Pins).servers), {
            timeoutMs: 60_000,
            what: 'the first sight of notes/s to be recorded',
          });
          const recorded = JSON.parse(await readFile(pinsPath, 'utf8')) as Pins;

          // Neither tool approved (as after an update of the server): both held.
          await replaceWith(pinsPath, JSON.stringify(pinsWith(recorded, []), null, 2));
          await waitFor(async () => (await held(wb.client, 'read')) && (await held(wb.client, 'list')), { timeoutMs: 60_000, what: 'both tools to be held' });

          // The watcher starts reading (and stays in that read); meanwhile `read` is approved from elsewhere, and the
          // workbench writes the file itself (its first sight of other/o), applying what it wrote: `read` callable.
          const endRead = await stalledRead(dir, pinsPath);
          await replaceWith(pinsPath, JSON.stringify(pinsWith(recorded, ['read']), null, 2));
          await call(wb.client, 'open_toolbox', { toolbox_name: 'other' });
          await waitFor(async () => !(await held(wb.client, 'read')), { timeoutMs: 60_000, what: "the workbench's own write to apply the approval" });

          // The read begun before all that ends with older content (here: a half-saved file): it must not apply.
          await endRead('{ "format": 1, "servers": {');
          for (let i = 0; i < 20; i++) {
            const answer = await useTool(wb.client, 'read');
            assert.notEqual(answer.isError, true, `call ${i} after the older read ended: ${textOf(answer)}`);
          }
          // A change made after that is followed as ever (and proves the older read was done with).
          const now = JSON.parse(await readFile(pinsPath, 'utf8')) as Pins;
          assert.ok('other/o' in now.servers, 'the own write kept what it recorded');
          await replaceWith(pinsPath, JSON.stringify({ ...now, servers: { ...now.servers, 'notes/s': recorded.servers['notes/s'] } }, null, 2));
          await waitFor(async () => !(await held(wb.client, 'list')), { timeoutMs: 60_000, what: 'the approval of list to be followed' });
          assert.notEqual((await useTool(wb.client, 'read')).isError, true);
          assert.doesNotMatch(wb.stderr(), /tool pins file .* does not parse/, 'the older, half-saved content was never applied');
        } finally {
          await wb.close();
        }
      });
    });
  }
}
