import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult, McpSubscription } from '@modelcontextprotocol/client';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import { ERAS, startEra, type EraName, type EraWorkbench, type Over } from '../helpers/era-workbench.js';
import { logLines } from '../helpers/log-lines.js';
import { fixtureEvents, fixtureServer, memoryServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

/** Generous: under load, a reload still takes well under a second; this only bounds a hung test. */
const WITHIN = 20_000;

/** Every transport with a client of each protocol era (README "Protocol eras"). */
const PATHS = (['stdio', 'http'] as const).flatMap((over: Over) => ERAS.map((era: EraName) => ({ over, era })));

function toolboxEnum(tools: { name: string; inputSchema: { properties?: unknown } }[]): string[] {
  const open = tools.find((t) => t.name === 'open_toolbox')!;
  return (open.inputSchema.properties as Record<string, { enum?: string[] }>).toolbox_name!.enum ?? [];
}

/** The workbench plus what these tests need of it: how many tools/list_changed it sent, and the calls they make. */
interface Watched {
  wb: EraWorkbench;
  changes(): number;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  useTool(toolbox: string, tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * Starts the workbench (JSON log lines) with an `era` client that counts tools/list_changed: a handshake-era client
 * hears it on its session (over HTTP the session's GET stream, opened by a first request), a modern one on its
 * subscriptions/listen stream.
 */
async function watched(over: Over, era: EraName, config: unknown, args: string[] = []): Promise<Watched> {
  let changes = 0;
  const wb = await startEra(over, era, config, (client) => client.setNotificationHandler('notifications/tools/list_changed', () => void changes++), {}, {
    args,
    env: { WORKBENCH_LOG_FORMAT: 'json' },
  });
  assert.equal(wb.client.getProtocolEra(), era);
  let subscription: McpSubscription | undefined;
  if (era === 'modern') subscription = await wb.client.listen({ toolsListChanged: true });
  else await wb.client.listTools();
  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => (await wb.client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    wb,
    changes: () => changes,
    call,
    useTool: (toolbox, tool, args) => call('use_tool', { toolbox_name: toolbox, tool_name: tool, ...(args ? { arguments: args } : {}) }),
    close: async () => {
      await subscription?.close().catch(() => {});
      await wb.close();
    },
  };
}

/** The `config_warning` of an open_toolbox answer (undefined when there is none). */
function configWarning(result: CallToolResult): string | undefined {
  return (result.structuredContent as { config_warning?: string } | undefined)?.config_warning;
}

/** The `hint` of a workbench error result (README "Errors"). */
function errorHint(result: CallToolResult): unknown {
  return (result._meta?.['mcp-workbench/error'] as { hint?: unknown } | undefined)?.hint;
}

/**
 * Polls open_toolbox on `toolbox` until its answer carries a `config_warning` about the edit (`about` matches it);
 * returns it. A write that truncates before it writes can be seen half-done (an empty file is refused too), so an
 * earlier warning about that moment is waited past.
 */
async function refusedEdit(w: Watched, toolbox: string, about: RegExp): Promise<string> {
  let warning: string | undefined;
  await waitFor(async () => about.test((warning = configWarning(await w.call('open_toolbox', { toolbox_name: toolbox }))) ?? ''), {
    timeoutMs: WITHIN,
    what: `a config_warning matching ${about} on open_toolbox "${toolbox}"; last: ${warning}; stderr:\n${w.wb.stderr()}`,
  });
  return warning!;
}

/** How many refused edits the workbench logged so far (README "Command line", Logs): an error line each. */
function errorLines(w: Watched): number {
  return logLines(w.wb.stderr()).filter((line) => line.level === 'error' && line.fields.event === 'config_refused' && typeof line.fields.code === 'string').length;
}

/** Waits until the workbench logged more than `before` error lines: the refused edit was reported on stderr too. */
async function loggedError(w: Watched, before: number): Promise<void> {
  await waitFor(() => errorLines(w) > before, { timeoutMs: WITHIN, what: `an error log line for the refused edit; stderr:\n${w.wb.stderr()}` });
}

for (const { over, era } of PATHS) {
  describe(`live config reload over ${over} (${era} client)`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let w: Watched;
    const fxLog = (): string => join(data.dir, 'fx.log');
    let current: { toolboxes: Record<string, unknown>; toolsets?: Record<string, unknown> };

    /** Writes the config in place (as most programs do) and waits for the client to be told about it. */
    async function edit(next: typeof current, write: (text: string) => Promise<void> = (text) => writeFile(w.wb.configPath, text)): Promise<void> {
      const before = w.changes();
      current = next;
      await write(JSON.stringify(next, null, 2));
      assert.ok(await waitFor(() => w.changes() > before, WITHIN), `no tools/list_changed after the edit; stderr:\n${w.wb.stderr()}`);
    }

    async function open(name: string): Promise<OpenToolboxResult> {
      const result = await w.call('open_toolbox', { toolbox_name: name });
      assert.notEqual(result.isError, true, textOf(result));
      return result.structuredContent as OpenToolboxResult;
    }

    const listTools = async (): Promise<{ name: string; inputSchema: { properties?: unknown } }[]> => (await w.wb.client.listTools()).tools;

    before(async () => {
      data = await tempDir();
      current = {
        toolboxes: { fx: { description: 'Fixture', mcpServers: { fixture: fixtureServer('--log', fxLog()) } } },
      };
      w = await watched(over, era, current);
    });
    after(async () => {
      await w.close();
      await data.cleanup();
    });

    it('declares tools.listChanged', () => {
      assert.equal(w.wb.client.getServerCapabilities()?.tools?.listChanged, true);
    });

    it('adds a toolbox and a toolset without a restart; the meta-tools carry the new names', async () => {
      await edit({
        toolboxes: {
          ...current.toolboxes,
          notes: { description: 'Knowledge graph', mcpServers: { memory: memoryServer(join(data.dir, 'memory.jsonl')) } },
        },
        toolsets: { quick: { description: 'Quick', tools: ['notes__memory__read_graph', 'fx__fixture__echo'] } },
      });
      const tools = await listTools();
      assert.deepEqual(toolboxEnum(tools), ['fx', 'notes', 'quick']);
      assert.ok((await open('notes')).tools.some((t) => t.name === 'notes__memory__read_graph'));
      assert.deepEqual((await open('quick')).tools.map((t) => t.name), ['fx__fixture__echo', 'notes__memory__read_graph'], 'in config order');
    });

    it('applies changed descriptions and overrides to the next open_toolbox, keeping an unchanged server running', async () => {
      const pidBefore = textOf(await w.useTool('fx', 'fx__fixture__pid', {}));
      const fx = current.toolboxes.fx as { mcpServers: Record<string, Record<string, unknown>> };
      await edit({
        ...current,
        toolboxes: {
          ...current.toolboxes,
          fx: {
            description: 'Fixture, described anew',
            mcpServers: { fixture: { ...fx.mcpServers.fixture, toolOverrides: { echo: { descriptionSuffix: 'Staging only.' } } } },
          },
        },
      });
      const opened = await open('fx');
      assert.equal(opened.description, 'Fixture, described anew');
      assert.match(opened.tools.find((t) => t.name === 'fx__fixture__echo')!.description, /Staging only\.$/);
      assert.equal(textOf(await w.useTool('fx', 'fx__fixture__pid', {})), pidBefore, 'no launch setting changed: same process');
    });

    it('restarts a server whose launch settings changed on its next use', async () => {
      const pidBefore = textOf(await w.useTool('fx', 'fx__fixture__pid', {}));
      const fx = current.toolboxes.fx as { description: string; mcpServers: { fixture: Record<string, unknown> } };
      await edit({
        ...current,
        toolboxes: {
          ...current.toolboxes,
          fx: { ...fx, mcpServers: { fixture: { ...fx.mcpServers.fixture, args: [...(fx.mcpServers.fixture.args as string[]), '--name', 'renamed'] } } },
        },
      });
      const pidAfter = textOf(await w.useTool('fx', 'fx__fixture__pid', {}));
      assert.notEqual(pidAfter, pidBefore);
      assert.ok(
        await waitFor(async () => (await fixtureEvents(fxLog())).some((e) => e.event === 'exit' && String(e.pid) === pidBefore), WITHIN),
        'the old process was closed',
      );
    });

    it('keeps serving the previous config after an invalid edit, reports every problem with its path, and never rewrites the file', async () => {
      const invalid = JSON.stringify({ toolboxes: { fx: { mcpServers: { fixture: { comand: 'x' } } }, 'bad__name': { mcpServers: {} } } });
      const errorsBefore = errorLines(w);
      await writeFile(w.wb.configPath, invalid);
      // The model is told: every answer carries the problems with their paths, while the previous config serves.
      const warning = await refusedEdit(w, 'fx', /unknown key "comand"/);
      assert.match(warning, /last edit is not applied/);
      assert.match(warning, /toolboxes\.fx\.mcpServers\.fixture: unknown key "comand"/);
      assert.match(warning, /toolboxes\.bad__name/);
      await loggedError(w, errorsBefore);
      assert.equal(await readFile(w.wb.configPath, 'utf8'), invalid);
      assert.equal(textOf(await w.useTool('fx', 'fx__fixture__echo', { text: 'still here' })), 'still here');
      // An unknown toolbox may be the one the edit adds: the error says so, and what to do.
      const unknown = await w.call('open_toolbox', { toolbox_name: 'added_by_the_edit' });
      assert.equal(workbenchErrorCode(unknown), 'TOOLBOX_NOT_FOUND');
      assert.match(textOf(unknown), /last edit is not applied/);
      assert.equal(errorHint(unknown), 'Fix the config file; its edit is applied as soon as it is valid.');
      // Put the last valid config back so the next steps start from it; the note goes with the problem.
      await edit(current);
      assert.equal(configWarning(await w.call('open_toolbox', { toolbox_name: 'fx' })), undefined);
    });

    it('sees an editor-style save (write a temporary file, rename it over the config)', async () => {
      await edit({ ...current, toolsets: { ...current.toolsets, renamed: { tools: ['fx__fixture__add'] } } }, async (text) => {
        const temporary = join(data.dir, '.workbench-config.json.swp');
        await writeFile(temporary, text);
        await rename(temporary, w.wb.configPath);
      });
      assert.deepEqual((await open('renamed')).tools.map((t) => t.name), ['fx__fixture__add']);
    });

    it('removes a toolbox: a call in flight finishes first, then its server closes; the name is gone', async () => {
      const pid = textOf(await w.useTool('fx', 'fx__fixture__pid', {}));
      let settled = false;
      const inFlight = w.useTool('fx', 'fx__fixture__slow', { ms: 4000 }).finally(() => (settled = true));
      assert.ok(await waitFor(async () => (await fixtureEvents(fxLog())).some((e) => e.event === 'call' && e.tool === 'slow'), WITHIN));
      const { fx: _removed, ...rest } = current.toolboxes;
      await edit({ toolboxes: rest, toolsets: { quick: { tools: ['notes__memory__read_graph'] } } });
      assert.equal(settled, false, 'the reload did not wait for the call (it was still running when the client was told)');
      const result: CallToolResult = await inFlight;
      assert.notEqual(result.isError, true, textOf(result));
      assert.match(textOf(result), /done after/);
      assert.ok(
        await waitFor(async () => (await fixtureEvents(fxLog())).some((e) => e.event === 'exit' && String(e.pid) === pid), WITHIN),
        'the removed toolbox\'s server was closed',
      );
      const tools = await listTools();
      assert.deepEqual(toolboxEnum(tools), ['notes', 'quick']);
      assert.equal(workbenchErrorCode(await w.useTool('fx', 'fx__fixture__echo', { text: 'x' })), 'TOOLBOX_NOT_FOUND');
    });
  });
}

describe('a call waiting for a server to start, across a reload that changes or removes that server', () => {
  // Starts in about 4 s, as `npx -y` does while it downloads.
  const slowStart = (extra: Record<string, unknown> = {}): Record<string, unknown> => {
    const { command, args } = fixtureServer();
    return { command: 'sh', args: ['-c', `sleep 4; exec "${command}" ${args.map((a) => `"${a}"`).join(' ')}`], ...extra };
  };
  for (const { over, era } of [{ over: 'stdio', era: 'legacy' }, { over: 'http', era: 'modern' }] as const) {
    it(`runs on the new config when the server changed, and says the server was removed when it was (${over}, ${era} client)`, async () => {
      const w = await watched(over, era, { toolboxes: { lab: { mcpServers: { slow: slowStart() } } } });
      try {
        // While the call waits, its server's timeoutMs is raised: the call runs on the server as now configured.
        const waiting = w.useTool('lab', 'lab__slow__echo', { text: 'hello' });
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await writeFile(w.wb.configPath, JSON.stringify({ toolboxes: { lab: { mcpServers: { slow: slowStart({ timeoutMs: 300_000 }) } } } }));
        const result = await waiting;
        assert.notEqual(result.isError, true, textOf(result));
        assert.equal(textOf(result), 'hello');
      } finally {
        await w.close();
      }
      const removed = await watched(over, era, { toolboxes: { lab: { mcpServers: { slow: slowStart(), fast: fixtureServer() } } } });
      try {
        // While the call waits, its server is removed from the config: it says so, not "shutting down".
        const waiting = removed.useTool('lab', 'lab__slow__echo', { text: 'hello' });
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await writeFile(removed.wb.configPath, JSON.stringify({ toolboxes: { lab: { mcpServers: { fast: fixtureServer() } } } }));
        const result = await waiting;
        assert.equal(result.isError, true, textOf(result));
        assert.notEqual(workbenchErrorCode(result), 'SHUTTING_DOWN', textOf(result));
        assert.match(textOf(result), /removed from the config/);
        assert.equal(textOf(await removed.useTool('lab', 'lab__fast__echo', { text: 'still here' })), 'still here');
      } finally {
        await removed.close();
      }
    });
  }
});

describe('live reload of the project file', () => {
  for (const { over, era } of PATHS) {
    it(`applies a narrowing edit, and refuses one that adds servers while the previous rules keep serving (${over}, ${era} client)`, async () => {
      const data = await tempDir();
      const projectPath = join(data.dir, '.mcp-workbench.json');
      await writeFile(projectPath, JSON.stringify({ disabledTools: [] }));
      const w = await watched(over, era, { toolboxes: { fx: { mcpServers: { fixture: fixtureServer() } } } }, ['--project', data.dir]);
      try {
        await writeFile(projectPath, JSON.stringify({ disabledTools: ['fx__fixture__echo'] }));
        assert.ok(await waitFor(() => w.changes() > 0, WITHIN), w.wb.stderr());
        const refused = await w.useTool('fx', 'fx__fixture__echo', { text: 'x' });
        assert.equal(workbenchErrorCode(refused), 'TOOL_DISABLED');
        assert.match(textOf(refused), /source: project/);

        const errorsBefore = errorLines(w);
        await writeFile(projectPath, JSON.stringify({ disabledTools: [], mcpServers: { evil: { command: 'sh' } } }));
        await refusedEdit(w, 'fx', /never add servers or commands/);
        await loggedError(w, errorsBefore);
        assert.equal(workbenchErrorCode(await w.useTool('fx', 'fx__fixture__echo', { text: 'x' })), 'TOOL_DISABLED', 'previous rules still apply');
      } finally {
        await w.close();
        await data.cleanup();
      }
    });
  }
});

describe('live reload of a project toolset named like a config toolset', () => {
  for (const { over, era } of PATHS) {
    it(`keeps it within the config's toolset through every edit, warning once per load (${over}, ${era} client)`, async () => {
      const data = await tempDir();
      const projectPath = join(data.dir, '.mcp-workbench.json');
      const toolset = (tools: string[]): string => JSON.stringify({ toolsets: { quick: { tools } } });
      await writeFile(projectPath, toolset(['fx__fixture__echo']));
      const config = {
        toolboxes: { fx: { mcpServers: { fixture: fixtureServer() } } },
        toolsets: { quick: { tools: ['fx__fixture__echo', 'fx__fixture__add'] } },
      };
      const w = await watched(over, era, config, ['--project', data.dir]);
      const quick = async (): Promise<string[]> => {
        const result = await w.call('open_toolbox', { toolbox_name: 'quick' });
        assert.notEqual(result.isError, true, textOf(result));
        return (result.structuredContent as OpenToolboxResult).tools.map((t) => t.name).sort();
      };
      const narrowed = (): number =>
        logLines(w.wb.stderr()).filter((line) => line.level === 'warn' && /toolset "quick" is also in .*; the project's only narrows it/.test(line.message)).length;
      /** Writes the project file and waits until the reload is applied (the client is told the tools changed). */
      const edit = async (text: string): Promise<void> => {
        const before = w.changes();
        await writeFile(projectPath, text);
        assert.ok(await waitFor(() => w.changes() > before, WITHIN), `no tools/list_changed after the edit; stderr:\n${w.wb.stderr()}`);
      };
      try {
        assert.deepEqual(await quick(), ['fx__fixture__echo']);
        assert.equal(narrowed(), 1, 'the start load names the toolset the project file narrows');

        await edit(toolset(['fx__fixture__*']));
        assert.deepEqual(await quick(), ['fx__fixture__add', 'fx__fixture__echo'], 'a wider project toolset is held to the config\'s');
        assert.equal(workbenchErrorCode(await w.useTool('quick', 'crash', {})), 'TOOL_NOT_FOUND', 'no tool beyond the config\'s toolset is callable through it');
        assert.ok(await waitFor(() => narrowed() === 2, WITHIN), 'the reload warns again, once');

        await edit(toolset(['fx__fixture__add']));
        assert.deepEqual(await quick(), ['fx__fixture__add'], 'a narrower one narrows');
        assert.ok(await waitFor(() => narrowed() === 3, WITHIN), w.wb.stderr());

        await edit('{}');
        assert.deepEqual(await quick(), ['fx__fixture__add', 'fx__fixture__echo'], 'without it, the config\'s toolset is back');
        assert.equal(narrowed(), 3, 'a load without the project toolset says nothing of it');
      } finally {
        await w.close();
        await data.cleanup();
      }
    });
  }
});

describe('live reload with serve --toolset', () => {
  for (const { over, era } of PATHS) {
    it(`refuses an edit that removes the toolset the session is limited to, and keeps serving (${over}, ${era} client)`, async () => {
      const config = {
        toolboxes: { fx: { mcpServers: { fixture: fixtureServer() } } },
        toolsets: { quick: { tools: ['fx__fixture__echo'] } },
      };
      const w = await watched(over, era, config, ['--toolset', 'quick']);
      try {
        const errorsBefore = errorLines(w);
        await writeFile(w.wb.configPath, JSON.stringify({ toolboxes: config.toolboxes }));
        await refusedEdit(w, 'quick', /--toolset names "quick"/);
        await loggedError(w, errorsBefore);
        assert.equal(textOf(await w.useTool('quick', 'echo', { text: 'kept' })), 'kept');
        assert.equal(workbenchErrorCode(await w.useTool('fx', 'fx__fixture__add', { a: 1, b: 2 })), 'TOOL_DISABLED', 'still limited');
      } finally {
        await w.close();
      }
    });
  }
});
