import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import { TRANSPORTS, startOver, type AnyWorkbench } from '../helpers/both-transports.js';
import { errorLine, logLines } from '../helpers/log-lines.js';
import {
  everythingServer,
  fixtureEvents,
  fixtureServer,
  memoryServer,
  runCli,
  tempDir,
  textOf,
  workbenchErrorCode,
} from '../helpers/workbench-process.js';

/** Three toolboxes a "quick" toolset draws from, and one it never touches (whose server must never start). */
function catalogConfig(dir: string): unknown {
  return {
    toolboxes: {
      demo: { description: 'Reference server', mcpServers: { everything: everythingServer() } },
      notes: { description: 'Knowledge graph', mcpServers: { memory: memoryServer(join(dir, 'memory.jsonl')) } },
      fx: {
        description: 'Fixture',
        mcpServers: { fixture: { ...fixtureServer('--log', join(dir, 'fx.log')), disabledTools: ['pid'] } },
      },
      idle: { description: 'Never needed by the toolset', mcpServers: { fixture: fixtureServer('--log', join(dir, 'idle.log')) } },
    },
    toolsets: {
      quick: {
        description: 'Small set for quick tasks',
        tools: ['demo__everything__get-sum', 'notes__memory__read_graph', 'fx__fixture__ech*', 'fx__fixture__add', 'fx__fixture__pid'],
      },
    },
  };
}

async function open(wb: AnyWorkbench, name: string): Promise<OpenToolboxResult> {
  const result = await wb.call('open_toolbox', { toolbox_name: name });
  assert.notEqual(result.isError, true, textOf(result));
  return result.structuredContent as OpenToolboxResult;
}

for (const transport of TRANSPORTS) {
  describe(`toolsets over ${transport}`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let wb: AnyWorkbench;

    before(async () => {
      data = await tempDir();
      wb = await startOver(transport, catalogConfig(data.dir));
    });
    after(async () => {
      await wb.close();
      await data.cleanup();
    });

    it('lists the toolset beside the toolboxes: in the instructions and in the toolbox_name enum', async () => {
      assert.match(wb.client.getInstructions() ?? '', /- quick \(toolset\): Small set for quick tasks/);
      const { tools } = await wb.client.listTools();
      const openTool = tools.find((t) => t.name === 'open_toolbox')!;
      const property = (openTool.inputSchema.properties as Record<string, { enum?: string[] }>).toolbox_name!;
      assert.deepEqual(property.enum, ['demo', 'notes', 'fx', 'idle', 'quick']);
    });

    it('opens just the toolset\'s enabled tools, with canonical names, connecting only the servers they need', async () => {
      const result = await open(wb, 'quick');
      assert.equal(result.toolbox, 'quick');
      assert.equal(result.description, 'Small set for quick tasks');
      assert.deepEqual(
        result.tools.map((t) => t.name),
        // fx__fixture__pid is in the toolset but disabled by the config: it stays disabled inside the toolset.
        ['demo__everything__get-sum', 'notes__memory__read_graph', 'fx__fixture__echo', 'fx__fixture__add'],
      );
      assert.deepEqual(result.servers_connected.sort(), ['demo/everything', 'fx/fixture', 'notes/memory']);
      assert.deepEqual(await fixtureEvents(join(data.dir, 'idle.log')), [], 'the idle toolbox\'s server never started');
    });

    it('routes use_tool with the toolset name to the owning toolbox, by canonical or bare name', async () => {
      const sum = await wb.useTool('quick', 'demo__everything__get-sum', { a: 2, b: 3 });
      assert.notEqual(sum.isError, true, textOf(sum));
      assert.match(textOf(sum), /5/);
      const echoed = await wb.useTool('quick', 'echo', { text: 'through the toolset' });
      assert.equal(textOf(echoed), 'through the toolset', 'the bare name is unique in the toolset (demo echo is not in it)');
      const added = await wb.useTool('quick', 'fx__fixture__add', { a: 1, b: 1 });
      assert.deepEqual(added.structuredContent, { sum: 2 });
      const graph = await wb.useTool('quick', 'notes__memory__read_graph', {});
      assert.notEqual(graph.isError, true, textOf(graph));
    });

    it('refuses a tool outside the toolset, and a disabled one, with codes', async () => {
      const outside = await wb.useTool('quick', 'demo__everything__echo', { message: 'x' });
      assert.equal(workbenchErrorCode(outside), 'TOOL_NOT_FOUND');
      // The way on is the toolbox its name says, not a closest name of the toolset (another tool altogether).
      assert.match(textOf(outside), /is not in toolset "quick"\. Its name says toolbox "demo": call use_tool with toolbox_name "demo"/);
      assert.doesNotMatch(textOf(outside), /Closest names/);
      // A -/_ variant of a full name the toolset holds is routed as that name.
      const variant = await wb.useTool('quick', 'demo__everything__get_sum', { a: 1, b: 2 });
      assert.notEqual(variant.isError, true, textOf(variant));
      // A misspelt server in a full name: nothing to start or wait for, and the closest names are the way on.
      const misspelt = await wb.useTool('demo', 'demo__everythng__get-sum', { a: 1, b: 2 });
      assert.equal(workbenchErrorCode(misspelt), 'TOOL_NOT_FOUND');
      assert.match(textOf(misspelt), /names server "everythng", which toolbox "demo" does not have\..*Closest names: [^.]*demo__everything__get-sum/);
      const disabled = await wb.useTool('quick', 'fx__fixture__pid', {});
      assert.equal(workbenchErrorCode(disabled), 'TOOL_DISABLED');
      assert.match(textOf(disabled), /source: config/);
    });
  });
}

for (const transport of TRANSPORTS) {
  describe(`serve --toolset over ${transport}`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let wb: AnyWorkbench;

    before(async () => {
      data = await tempDir();
      wb = await startOver(transport, catalogConfig(data.dir), ['--toolset', 'quick']);
    });
    after(async () => {
      await wb.close();
      await data.cleanup();
    });

    it('limits every toolbox to the toolset\'s tools, naming "toolset" as the source of the rest', async () => {
      const fx = await open(wb, 'fx');
      assert.deepEqual(fx.tools.map((t) => t.name), ['fx__fixture__echo', 'fx__fixture__add']);
      const outside = await wb.useTool('fx', 'fx__fixture__fail', {});
      assert.equal(workbenchErrorCode(outside), 'TOOL_DISABLED');
      assert.match(textOf(outside), /source: toolset/);
      const inside = await wb.useTool('fx', 'fx__fixture__echo', { text: 'ok' });
      assert.equal(textOf(inside), 'ok');
    });

    it('a cloned repository\'s project file that redefines the toolset cannot widen it, only narrow it', async () => {
      const repo = join(data.dir, `repo-${transport}`);
      await mkdir(repo);
      await writeFile(join(repo, '.mcp-workbench.json'), JSON.stringify({ toolsets: { quick: { tools: ['fx__*', 'notes__*'] } } }));
      const limited = await startOver(transport, catalogConfig(data.dir), ['--toolset', 'quick', '--project', repo]);
      try {
        const fx = await open(limited, 'fx');
        assert.deepEqual(fx.tools.map((t) => t.name), ['fx__fixture__echo', 'fx__fixture__add']);
        const outside = await limited.useTool('fx', 'fx__fixture__fail', {});
        assert.equal(workbenchErrorCode(outside), 'TOOL_DISABLED');
        assert.match(textOf(outside), /source: toolset/);
        // Narrowed: the config's toolset has demo__everything__get-sum, the project's patterns do not.
        const narrowed = await limited.useTool('demo', 'demo__everything__get-sum', { a: 1, b: 2 });
        assert.equal(workbenchErrorCode(narrowed), 'TOOL_DISABLED');
      } finally {
        await limited.close();
      }
    });
  });
}

describe('toolsets from the command line', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let configPath: string;

  before(async () => {
    data = await tempDir();
    configPath = join(data.dir, 'workbench-config.json');
    const config = catalogConfig(data.dir) as { toolsets: Record<string, unknown> };
    config.toolsets.typo = { tools: ['fx__fixture__echo', 'fx__fixture__ecko', 'nowhere__x__y'] };
    await writeFile(configPath, JSON.stringify(config));
  });
  after(() => data.cleanup());

  it('tools list --toolset shows what the toolset resolves to and warns about each entry that matches nothing', () => {
    const run = runCli(['tools', 'list', '--config', configPath, '--toolset', 'typo', '--json'], {
      cwd: data.dir,
      env: { WORKBENCH_STATE_FILE: join(data.dir, 'state.json'), WORKBENCH_LOG_FORMAT: 'json' },
    });
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout) as { tools: { name: string }[]; unmatched: string[] };
    assert.deepEqual(report.tools.map((t) => t.name), ['fx__fixture__echo']);
    assert.deepEqual(report.unmatched, ['fx__fixture__ecko', 'nowhere__x__y']);
    const warned = logLines(run.stderr).filter((l) => l.level === 'warn' && l.fields.toolset === 'typo');
    assert.deepEqual(warned.map((l) => l.fields.pattern), ['fx__fixture__ecko', 'nowhere__x__y'], run.stderr);
  });

  it('validate warns, without connecting anything, about an entry that names no configured toolbox and server', () => {
    const run = runCli(['validate', '--config', configPath, '--json'], { cwd: data.dir });
    assert.equal(run.code, 0, run.stderr);
    const { warnings } = JSON.parse(run.stdout) as { warnings: string[] };
    assert.ok(warnings.some((w) => w.includes('nowhere__x__y')), JSON.stringify(warnings));
    assert.ok(!warnings.some((w) => w.includes('fx__fixture__ecko')), 'that one reaches a server: only a connected catalog can tell');
  });

  it('serve --toolset with a name the config does not define is a usage error at start, naming it', () => {
    const run = runCli(['serve', '--config', configPath, '--toolset', 'nosuch'], { cwd: data.dir, env: { WORKBENCH_LOG_FORMAT: 'json' } });
    assert.equal(run.code, 2);
    assert.equal(errorLine(run.stderr).fields.code, 'USAGE');
    // the message is the product: it must name the toolset it does not know
    assert.match(errorLine(run.stderr).message, /"nosuch"/);
  });
});
