import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import { TRANSPORTS, startOver, type AnyWorkbench } from '../helpers/both-transports.js';
import { fixtureEvents, fixtureServer, memoryServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

/** Generous: under load, a reload still takes well under a second; this only bounds a hung test. */
const WITHIN = 20_000;

function toolboxEnum(tools: { name: string; inputSchema: { properties?: unknown } }[]): string[] {
  const open = tools.find((t) => t.name === 'open_toolbox')!;
  return (open.inputSchema.properties as Record<string, { enum?: string[] }>).toolbox_name!.enum ?? [];
}

for (const transport of TRANSPORTS) {
  describe(`live config reload over ${transport}`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let wb: AnyWorkbench;
    let changes = 0;
    const fxLog = (): string => join(data.dir, 'fx.log');
    let current: { toolboxes: Record<string, unknown>; toolsets?: Record<string, unknown> };

    /** Writes the config in place (as most programs do) and waits for the client to be told about it. */
    async function edit(next: typeof current, write: (text: string) => Promise<void> = (text) => writeFile(wb.configPath, text)): Promise<void> {
      const before = changes;
      current = next;
      await write(JSON.stringify(next, null, 2));
      assert.ok(await waitFor(() => changes > before, WITHIN), `no tools/list_changed after the edit; stderr:\n${wb.stderr()}`);
    }

    async function open(name: string): Promise<OpenToolboxResult> {
      const result = await wb.call('open_toolbox', { toolbox_name: name });
      assert.notEqual(result.isError, true, textOf(result));
      return result.structuredContent as OpenToolboxResult;
    }

    before(async () => {
      data = await tempDir();
      current = {
        toolboxes: { fx: { description: 'Fixture', mcpServers: { fixture: fixtureServer('--log', fxLog()) } } },
      };
      wb = await startOver(transport, current);
      wb.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changes++;
      });
      // Over HTTP, notifications outside a request travel on the session's GET stream: make sure it is open.
      await wb.client.listTools();
    });
    after(async () => {
      await wb.close();
      await data.cleanup();
    });

    it('declares tools.listChanged', () => {
      assert.equal(wb.client.getServerCapabilities()?.tools?.listChanged, true);
    });

    it('adds a toolbox and a toolset without a restart; the meta-tools carry the new names', async () => {
      await edit({
        toolboxes: {
          ...current.toolboxes,
          notes: { description: 'Knowledge graph', mcpServers: { memory: memoryServer(join(data.dir, 'memory.jsonl')) } },
        },
        toolsets: { quick: { description: 'Quick', tools: ['notes__memory__read_graph', 'fx__fixture__echo'] } },
      });
      const { tools } = await wb.client.listTools();
      assert.deepEqual(toolboxEnum(tools), ['fx', 'notes', 'quick']);
      assert.ok((await open('notes')).tools.some((t) => t.name === 'notes__memory__read_graph'));
      assert.deepEqual((await open('quick')).tools.map((t) => t.name), ['fx__fixture__echo', 'notes__memory__read_graph'], 'in config order');
    });

    it('applies changed descriptions and overrides to the next open_toolbox, keeping an unchanged server running', async () => {
      const pidBefore = textOf(await wb.useTool('fx', 'fx__fixture__pid', {}));
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
      assert.equal(textOf(await wb.useTool('fx', 'fx__fixture__pid', {})), pidBefore, 'no launch setting changed: same process');
    });

    it('restarts a server whose launch settings changed on its next use', async () => {
      const pidBefore = textOf(await wb.useTool('fx', 'fx__fixture__pid', {}));
      const fx = current.toolboxes.fx as { description: string; mcpServers: { fixture: Record<string, unknown> } };
      await edit({
        ...current,
        toolboxes: {
          ...current.toolboxes,
          fx: { ...fx, mcpServers: { fixture: { ...fx.mcpServers.fixture, args: [...(fx.mcpServers.fixture.args as string[]), '--name', 'renamed'] } } },
        },
      });
      const pidAfter = textOf(await wb.useTool('fx', 'fx__fixture__pid', {}));
      assert.notEqual(pidAfter, pidBefore);
      assert.ok(
        await waitFor(async () => (await fixtureEvents(fxLog())).some((e) => e.event === 'exit' && String(e.pid) === pidBefore), WITHIN),
        'the old process was closed',
      );
    });

    it('keeps serving the previous config after an invalid edit, reports every problem with its path, and never rewrites the file', async () => {
      const invalid = JSON.stringify({ toolboxes: { fx: { mcpServers: { fixture: { comand: 'x' } } }, 'bad__name': { mcpServers: {} } } });
      await writeFile(wb.configPath, invalid);
      assert.ok(await waitFor(() => /config change not applied/.test(wb.stderr()), WITHIN), wb.stderr());
      assert.match(wb.stderr(), /toolboxes\.fx\.mcpServers\.fixture: unknown key "comand"/);
      assert.match(wb.stderr(), /toolboxes\.bad__name/);
      assert.equal(await readFile(wb.configPath, 'utf8'), invalid);
      assert.equal(textOf(await wb.useTool('fx', 'fx__fixture__echo', { text: 'still here' })), 'still here');
      // The model is told too: answers carry the problem, and an unknown toolbox may be the one the edit adds.
      const opened = await wb.call('open_toolbox', { toolbox_name: 'fx' });
      assert.notEqual(opened.isError, true, textOf(opened));
      const warning = (opened.structuredContent as { config_warning?: string }).config_warning ?? '';
      assert.match(warning, /last edit is not applied/);
      assert.match(warning, /toolboxes\.fx\.mcpServers\.fixture: unknown key "comand"/);
      const unknown = await wb.call('open_toolbox', { toolbox_name: 'added_by_the_edit' });
      assert.equal(workbenchErrorCode(unknown), 'TOOLBOX_NOT_FOUND');
      assert.match(textOf(unknown), /last edit is not applied/);
      // Put the last valid config back so the next steps start from it; the note goes with the problem.
      await edit(current);
      const again = await wb.call('open_toolbox', { toolbox_name: 'fx' });
      assert.equal((again.structuredContent as { config_warning?: string }).config_warning, undefined);
    });

    it('sees an editor-style save (write a temporary file, rename it over the config)', async () => {
      await edit({ ...current, toolsets: { ...current.toolsets, renamed: { tools: ['fx__fixture__add'] } } }, async (text) => {
        const temporary = join(data.dir, '.workbench-config.json.swp');
        await writeFile(temporary, text);
        await rename(temporary, wb.configPath);
      });
      assert.deepEqual((await open('renamed')).tools.map((t) => t.name), ['fx__fixture__add']);
    });

    it('removes a toolbox: a call in flight finishes first, then its server closes; the name is gone', async () => {
      const pid = textOf(await wb.useTool('fx', 'fx__fixture__pid', {}));
      let settled = false;
      const inFlight = wb.useTool('fx', 'fx__fixture__slow', { ms: 4000 }).finally(() => (settled = true));
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
      const { tools } = await wb.client.listTools();
      assert.deepEqual(toolboxEnum(tools), ['notes', 'quick']);
      assert.equal(workbenchErrorCode(await wb.useTool('fx', 'fx__fixture__echo', { text: 'x' })), 'TOOLBOX_NOT_FOUND');
    });
  });
}

describe('live reload of the project file', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let wb: AnyWorkbench;
  let changes = 0;

  before(async () => {
    data = await tempDir();
    await writeFile(join(data.dir, '.mcp-workbench.json'), JSON.stringify({ disabledTools: [] }));
    wb = await startOver('stdio', { toolboxes: { fx: { mcpServers: { fixture: fixtureServer() } } } }, ['--project', data.dir]);
    wb.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
  });
  after(async () => {
    await wb.close();
    await data.cleanup();
  });

  it('applies a narrowing edit, and refuses one that adds servers while the previous rules keep serving', async () => {
    const projectPath = join(data.dir, '.mcp-workbench.json');
    await writeFile(projectPath, JSON.stringify({ disabledTools: ['fx__fixture__echo'] }));
    assert.ok(await waitFor(() => changes > 0, WITHIN), wb.stderr());
    const refused = await wb.useTool('fx', 'fx__fixture__echo', { text: 'x' });
    assert.equal(workbenchErrorCode(refused), 'TOOL_DISABLED');
    assert.match(textOf(refused), /source: project/);

    await writeFile(projectPath, JSON.stringify({ disabledTools: [], mcpServers: { evil: { command: 'sh' } } }));
    assert.ok(await waitFor(() => /never add servers or commands/.test(wb.stderr()), WITHIN), wb.stderr());
    assert.equal(workbenchErrorCode(await wb.useTool('fx', 'fx__fixture__echo', { text: 'x' })), 'TOOL_DISABLED', 'previous rules still apply');
  });
});

describe('live reload with serve --toolset', () => {
  it('refuses an edit that removes the toolset the session is limited to, and keeps serving', async () => {
    const config = {
      toolboxes: { fx: { mcpServers: { fixture: fixtureServer() } } },
      toolsets: { quick: { tools: ['fx__fixture__echo'] } },
    };
    const wb = await startOver('stdio', config, ['--toolset', 'quick']);
    try {
      await writeFile(wb.configPath, JSON.stringify({ toolboxes: config.toolboxes }));
      assert.ok(await waitFor(() => /config change not applied/.test(wb.stderr()), WITHIN), wb.stderr());
      assert.match(wb.stderr(), /--toolset names "quick"/);
      assert.equal(textOf(await wb.useTool('quick', 'echo', { text: 'kept' })), 'kept');
      assert.equal(workbenchErrorCode(await wb.useTool('fx', 'fx__fixture__add', { a: 1, b: 2 })), 'TOOL_DISABLED', 'still limited');
    } finally {
      await wb.close();
    }
  });
});
