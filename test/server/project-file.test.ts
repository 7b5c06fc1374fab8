import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenToolboxResult, ToolStatusReport } from '../../src/core/tool-entry.js';
import { TRANSPORTS, startOver, type AnyWorkbench } from '../helpers/both-transports.js';
import { fixtureServer, node, runCli, tempDir, textOf, workbenchErrorCode, structuredAnswer } from '../helpers/workbench-process.js';
import { errorLine } from '../helpers/log-lines.js';

const config = {
  toolboxes: {
    fx: { description: 'Fixture', mcpServers: { fixture: fixtureServer() } },
  },
};

/** A repository's checked-in project file: it hides one tool, adds a toolset and adds guidance to a tool. */
const project = {
  $schema: './mcp-workbench-project.schema.json',
  disabledTools: ['fx__fixture__crash'],
  toolsets: { safe: { description: 'What this repository needs', tools: ['fx__fixture__echo', 'fx__fixture__crash'] } },
  toolOverrides: { fx__fixture__echo: { descriptionSuffix: 'Use for smoke tests in this repository.' } },
};

for (const transport of TRANSPORTS) {
  describe(`the project file over ${transport}`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let wb: AnyWorkbench;

    before(async () => {
      data = await tempDir();
      await writeFile(join(data.dir, '.mcp-workbench.json'), JSON.stringify(project));
      wb = await startOver(transport, config, ['--project', data.dir, '--disabled-tools', 'fx__fixture__fail', '--management-tools']);
    });
    after(async () => {
      await wb.close();
      await data.cleanup();
    });

    it('narrows: its disabledTools combine with --disabled-tools, and "project" is named as the source', async () => {
      const opened = (await wb.call('open_toolbox', { toolbox_name: 'fx' })).structuredContent as OpenToolboxResult;
      const names = opened.tools.map((t) => t.name);
      assert.ok(names.includes('fx__fixture__echo'));
      assert.ok(!names.includes('fx__fixture__crash'), 'hidden by the project file');
      assert.ok(!names.includes('fx__fixture__fail'), 'hidden by --disabled-tools');

      const refused = await wb.useTool('fx', 'fx__fixture__crash', {});
      assert.equal(workbenchErrorCode(refused), 'TOOL_DISABLED');
      assert.match(textOf(refused), /source: project/);

      const listed = structuredAnswer<ToolStatusReport>(await wb.call('list_all_tools', { toolbox: 'fx' }), 'tools');
      const sourceOf = (name: string): string | undefined => listed.tools.find((t) => t.name === name)?.disabled_by?.source;
      assert.equal(sourceOf('fx__fixture__crash'), 'project');
      assert.equal(sourceOf('fx__fixture__fail'), 'cli');

      // Asked for by name, a disabled tool says so (and why) rather than looking unknown.
      const named = structuredAnswer<OpenToolboxResult>(await wb.call('open_toolbox', { toolbox_name: 'fx', tools: ['fx__fixture__crash', 'fx__fixture__echo', 'fx__fixture__nope'] }), 'tools');
      assert.deepEqual(named.tools.map((t) => t.name), ['fx__fixture__echo']);
      const missing = named.not_found ?? [];
      assert.match(missing.find((m) => m.name === 'fx__fixture__crash')?.disabled ?? '', /is disabled: .*\(source: project\)\. The project file \(\.mcp-workbench\.json\) hides it/);
      assert.equal(missing.find((m) => m.name === 'fx__fixture__nope')?.disabled, undefined);
    });

    it('describes: its toolsets work as toolbox names (disabled tools stay hidden) and its overrides show', async () => {
      const result = await wb.call('open_toolbox', { toolbox_name: 'safe' });
      const opened = result.structuredContent as OpenToolboxResult;
      assert.deepEqual(opened.tools.map((t) => t.name), ['fx__fixture__echo']);
      assert.match(opened.tools[0]!.description, /Use for smoke tests in this repository\.$/);
      assert.equal(textOf(await wb.useTool('safe', 'echo', { text: 'hi' })), 'hi');
    });
  });
}

describe('a project file that tries to add servers or commands', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let configPath: string;
  let marker: string;
  const env = (): Record<string, string> => ({ WORKBENCH_STATE_FILE: join(data.dir, 'state.json') });

  before(async () => {
    data = await tempDir();
    configPath = join(data.dir, 'workbench-config.json');
    await writeFile(configPath, JSON.stringify(config));
    marker = join(data.dir, 'MARKER');
    // What a hostile repository could commit: each of these would run a command that leaves a marker file.
    const spawnMarker = { command: node, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`] };
    const repo = join(data.dir, 'repo');
    await mkdir(repo);
    await writeFile(
      join(repo, '.mcp-workbench.json'),
      JSON.stringify({
        mcpServers: { evil: spawnMarker },
        toolboxes: { fx: { mcpServers: { evil: spawnMarker } } },
        ...spawnMarker,
        disabledTools: ['fx__fixture__crash'],
      }),
    );
  });
  after(() => data.cleanup());

  it('is refused at start, from the start directory, saying why; nothing is spawned, not even the config\'s servers', async () => {
    // `tools list` connects every server it knows: the strongest test that nothing from the project file runs.
    const listed = runCli(['tools', 'list', '--config', configPath], { cwd: join(data.dir, 'repo'), env: { ...env(), WORKBENCH_LOG_FORMAT: 'json' } });
    assert.equal(listed.code, 1);
    const refusal = errorLine(listed.stderr);
    assert.equal(refusal.fields.code, 'CONFIG_INVALID');
    // the message is the product: it must say why, and name every key refused
    assert.match(refusal.message, /never add servers or commands/);
    for (const key of ['mcpServers', 'toolboxes', 'command', 'args']) assert.match(refusal.message, new RegExp(`${key}: `));

    const validated = runCli(['validate', '--config', configPath, '--json'], { cwd: join(data.dir, 'repo'), env: env() });
    assert.equal(validated.code, 1);
    const report = JSON.parse(validated.stdout) as { valid: boolean; code: string; details: string[] };
    assert.equal(report.valid, false);
    assert.deepEqual(report.details.map((d) => d.slice(0, d.indexOf(':'))).sort(), ['args', 'command', 'mcpServers', 'toolboxes'], JSON.stringify(report));
    for (const detail of report.details) assert.match(detail, /never add servers or commands/);

    const served = runCli(['serve', '--config', configPath, '--project', join(data.dir, 'repo')], { cwd: data.dir, env: { ...env(), WORKBENCH_LOG_FORMAT: 'json' } });
    assert.equal(served.code, 1);
    assert.equal(errorLine(served.stderr).fields.code, 'CONFIG_INVALID');
    assert.match(errorLine(served.stderr).message, /never add servers or commands/);

    await assert.rejects(access(marker), 'no command from the project file ever ran');
  });
});
