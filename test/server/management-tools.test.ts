import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { OpenToolboxResult, ToolStatusReport } from '../../src/core/tool-entry.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TRANSPORTS, startOver } from '../helpers/both-transports.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { errorLine } from '../helpers/log-lines.js';
import { fixtureServer, runCli, startWorkbench, tempDir, textOf, waitFor, workbenchErrorCode, type RunningWorkbench, structuredAnswer } from '../helpers/workbench-process.js';

const config = {
  toolboxes: {
    tb: {
      disabledTools: ['tb__fx__crash'],
      mcpServers: {
        fx: { ...fixtureServer(), disabledTools: ['throw_*'] },
        narrow: { ...fixtureServer(), toolFilters: ['echo', 'add'] },
      },
    },
  },
};

async function toolNames(wb: RunningWorkbench): Promise<string[]> {
  const result = await wb.call('open_toolbox', { toolbox_name: 'tb' });
  return (result.structuredContent as OpenToolboxResult).tools.map((t) => t.name);
}

async function statusOf(wb: RunningWorkbench): Promise<Map<string, ToolStatusReport['tools'][number]>> {
  const result = await wb.call('list_all_tools', { toolbox: 'tb' });
  assert.notEqual(result.isError, true, textOf(result));
  return new Map(structuredAnswer<ToolStatusReport>(result, 'tools').tools.map((t) => [t.name, t]));
}

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { env: { HOME: '/nonexistent-home', ...env } });

describe('visibility: config, --disabled-tools and the state file', () => {
  it('applies toolFilters, disabledTools of server and toolbox, and --disabled-tools (trimmed), naming each source', async () => {
    const wb = await startWorkbench(config, { args: ['--management-tools', '--disabled-tools', ' tb__fx__echo , ,tb__narrow__a*'] });
    try {
      const names = await toolNames(wb);
      assert.deepEqual(names.filter((n) => n.startsWith('tb__narrow__')), ['tb__narrow__echo']);
      for (const hidden of ['tb__fx__echo', 'tb__fx__crash', 'tb__fx__throw_jsonrpc', 'tb__narrow__add', 'tb__narrow__pid']) {
        assert.equal(names.includes(hidden), false, `${hidden} is hidden`);
      }
      assert.ok(names.includes('tb__fx__add'));

      const status = await statusOf(wb);
      assert.equal(status.get('tb__fx__add')?.enabled, true);
      assert.deepEqual(status.get('tb__fx__echo')?.disabled_by?.source, 'cli');
      assert.deepEqual(status.get('tb__fx__crash')?.disabled_by?.source, 'config');
      assert.deepEqual(status.get('tb__fx__throw_jsonrpc')?.disabled_by?.rule, 'throw_*');
      assert.match(status.get('tb__narrow__pid')?.disabled_by?.reason ?? '', /toolFilters/);

      const refused = await wb.useTool('tb', 'tb__fx__echo', { text: 'x' });
      assert.equal(workbenchErrorCode(refused), 'TOOL_DISABLED');
      assert.match(textOf(refused), /--disabled-tools "tb__fx__echo"/);
    } finally {
      await wb.close();
    }
  });

  it('refuses a disabled tool before anything is started', async () => {
    const wb = await startWorkbench(config, { args: ['--disabled-tools', 'tb__fx__pid'] });
    try {
      const refused = await wb.useTool('tb', 'tb__fx__pid', {});
      assert.equal(workbenchErrorCode(refused), 'TOOL_DISABLED');
      assert.deepEqual(await wb.descendants(), [], 'no server was started for a refused call');
    } finally {
      await wb.close();
    }
  });

  it('treats a non-empty enabled list as an allowlist, and disabled always wins', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const stateFile = join(dir, 'state.json');
    await writeFile(stateFile, JSON.stringify({ enabled: ['tb__fx__echo', 'tb__fx__add', 'tb__narrow__*'], disabled: ['tb__fx__add'] }));
    const wb = await startWorkbench(config, { args: ['--state-file', stateFile, '--management-tools'] });
    try {
      assert.deepEqual((await toolNames(wb)).sort(), ['tb__fx__echo', 'tb__narrow__add', 'tb__narrow__echo']);
      const status = await statusOf(wb);
      assert.equal(status.get('tb__fx__add')?.disabled_by?.source, 'state');
      assert.match(status.get('tb__fx__pid')?.disabled_by?.reason ?? '', /allowlist/);
    } finally {
      await wb.close();
    }
  });

  it('keeps the management tools off by default', async () => {
    const wb = await startWorkbench(config);
    try {
      assert.deepEqual((await wb.client.listTools()).tools.map((t) => t.name).sort(), ['open_toolbox', 'use_tool']);
    } finally {
      await wb.close();
    }
  });
});

describe('enable_tools and the state file', () => {
  it('persists one atomic change, reports what changed and what was unknown, and protects the meta-tools', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const stateFile = join(dir, 'nested', 'tool-state.json');
    const wb = await startWorkbench(config, { args: ['--state-file', stateFile, '--management-tools'] });
    try {
      assert.deepEqual(
        (await wb.client.listTools()).tools.map((t) => t.name).sort(),
        ['enable_tools', 'list_all_tools', 'open_toolbox', 'use_tool'],
      );
      await toolNames(wb);
      const result = await wb.call('enable_tools', { disable: ['tb__fx__pid', ' tb__fx__pid ', 'tb__fx__nope', 'open_toolbox'] });
      assert.notEqual(result.isError, true, textOf(result));
      const summary = result.structuredContent as { disabled: string[]; unknown: string[]; notes: string[] };
      assert.deepEqual(summary.disabled, ['tb__fx__pid', 'tb__fx__nope']);
      assert.deepEqual(summary.unknown, ['tb__fx__nope']);
      assert.match(summary.notes.join(' '), /open_toolbox.*protected/);
      assert.equal(await readFile(stateFile, 'utf8'), `${JSON.stringify({ enabled: [], disabled: ['tb__fx__pid', 'tb__fx__nope'] }, null, 2)}\n`);
      assert.equal(workbenchErrorCode(await wb.useTool('tb', 'tb__fx__pid', {})), 'TOOL_DISABLED');
      assert.match(textOf(await wb.useTool('tb', 'tb__fx__pid', {})), /source: state/);
      // The way on names the command a person runs, and enable_tools only as offered where the workbench offers it.
      assert.match(textOf(await wb.useTool('tb', 'tb__fx__pid', {})), /`mcp-workbench tools enable tb__fx__pid`.*enable_tools tool, where the workbench offers it/);

      await wb.call('enable_tools', { enable: ['tb__fx__pid'] });
      assert.notEqual((await wb.useTool('tb', 'tb__fx__pid', {})).isError, true);

      // A tool the config hides stays hidden, and the answer says so instead of reporting success in silence.
      const hidden = await wb.call('enable_tools', { enable: ['tb__fx__crash'] });
      assert.notEqual(hidden.isError, true, textOf(hidden));
      assert.match((hidden.structuredContent as { notes: string[] }).notes.join(' '), /tb__fx__crash.*stays disabled: disabled by "tb__fx__crash" in disabledTools of the config/);
      assert.equal(workbenchErrorCode(await wb.useTool('tb', 'tb__fx__crash', {})), 'TOOL_DISABLED');

      // Nothing to change is a malformed call, answered with the signature (README "Errors"): INVALID_PARAMETERS.
      for (const args of [{}, { enable: [] }, { enable: [], disable: [] }]) {
        const nothing = await wb.call('enable_tools', args);
        assert.equal(workbenchErrorCode(nothing), 'INVALID_PARAMETERS', JSON.stringify(args));
        assert.match(textOf(nothing), /Expected: enable_tools \{ enable\?: string\[\], disable\?: string\[\] \}/);
      }
      assert.equal(workbenchErrorCode(await wb.call('enable_tools', { disable: ['use_tool'] })), 'INVALID_NAME', 'only a protected name');

      // Many names: the answer lists 50 of each and counts the rest (the state file holds them all).
      const many = Array.from({ length: 60 }, (_, i) => `tb__fx__zz${i}`);
      const bulk = (await wb.call('enable_tools', { disable: many })).structuredContent as { disabled: string[]; unknown: string[]; state: { disabled: string[] } };
      assert.equal(bulk.disabled.length, 51);
      assert.equal(bulk.disabled.at(-1), '(10 more)');
      assert.equal(bulk.unknown.at(-1), '(10 more)');
      const held = (JSON.parse(await readFile(stateFile, 'utf8')) as { disabled: string[] }).disabled;
      assert.ok(held.length >= 60 && many.every((n) => held.includes(n)), 'the file has every name');
      assert.equal(bulk.state.disabled.at(-1), `(${held.length - 50} more)`);
    } finally {
      await wb.close();
    }
  });

  for (const transport of TRANSPORTS) {
    it(`tells unknown names from known ones by the catalogs of the calling session (${transport})`, async () => {
      const { dir, cleanup } = await tempDir();
      after(cleanup);
      const wb = await startOver(transport, config, ['--state-file', join(dir, 'tool-state.json'), '--management-tools']);
      try {
        // A call needs the live catalog (open_toolbox alone may answer from the catalog cache); over HTTP it lives in
        // this session's own connections, not the workbench's.
        assert.notEqual((await wb.useTool('tb', 'tb__fx__echo', { text: 'up' })).isError, true);
        const result = await wb.call('enable_tools', { disable: ['tb__fx__pid', 'tb__fx__nope', 'tb__fx__zz*'] });
        assert.notEqual(result.isError, true, textOf(result));
        assert.deepEqual((result.structuredContent as { unknown: string[] }).unknown, ['tb__fx__nope', 'tb__fx__zz*']);
      } finally {
        await wb.close();
      }
    });
  }

  for (const transport of TRANSPORTS) {
    it(`list_all_tools over 1,500 tools answers in pages under 40,000 characters that together name every tool (${transport})`, async () => {
      const { dir, cleanup } = await tempDir();
      after(cleanup);
      const big = { toolboxes: { tb: { mcpServers: { fx: fixtureServer('--tools', '1500') } } } };
      const wb = await startOver(transport, big, ['--state-file', join(dir, 'tool-state.json'), '--management-tools']);
      try {
        const names: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const result = await wb.call('list_all_tools', cursor === undefined ? {} : { cursor });
          assert.ok(textOf(result).length <= 40_000, `${textOf(result).length} characters`);
          const page = result.structuredContent as { tools: { name: string; description?: string }[]; detail?: string; next_cursor?: string; hint?: string };
          assert.equal(page.detail, 'compact');
          assert.ok(page.tools.every((t) => t.description === undefined));
          if (page.next_cursor) assert.match(page.hint ?? '', /Call list_all_tools \{"cursor":"\d+"\} for the next page/);
          names.push(...page.tools.map((t) => t.name));
          cursor = page.next_cursor;
          pages++;
        } while (cursor !== undefined && pages < 50);
        assert.ok(pages > 1);
        assert.equal(new Set(names).size, names.length, 'no tool twice');
        assert.ok(names.includes('tb__fx__gen_0000') && names.includes('tb__fx__gen_1499') && names.includes('tb__fx__echo'));
        assert.equal(workbenchErrorCode(await wb.call('list_all_tools', { cursor: 'soon' })), 'INVALID_PARAMETERS');
      } finally {
        await wb.close();
      }
    });
  }

  it('reports an unwritable state file as an error result and keeps serving', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    await writeFile(join(dir, 'not-a-dir'), 'a file where a directory should be');
    const stateFile = join(dir, 'not-a-dir', 'tool-state.json');
    const wb = await startWorkbench(config, { args: ['--state-file', stateFile, '--management-tools'] });
    try {
      const result = await wb.call('enable_tools', { disable: ['tb__fx__pid'] });
      assert.equal(result.isError, true);
      assert.equal(workbenchErrorCode(result), 'STATE_UNWRITABLE');
      assert.match(textOf(result), /not-a-dir/);
      assert.equal(textOf(await wb.useTool('tb', 'tb__fx__echo', { text: 'still serving' })), 'still serving');
      assert.equal(await readFile(join(dir, 'not-a-dir'), 'utf8'), 'a file where a directory should be');
    } finally {
      await wb.close();
    }
  });

  it('a state file that does not parse at start-up: left where it is, a copy kept, every call refused until it is fixed', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const stateFile = join(dir, 'tool-state.json');
    const broken = '{ "disabled": [ "tb__fx__echo", ';
    await writeFile(stateFile, broken);
    const wb = await startWorkbench(config, { args: ['--state-file', stateFile] });
    try {
      // Fail closed: never the defaults (everything enabled) in place of the user's file.
      const refused = await wb.useTool('tb', 'tb__fx__pid', {});
      assert.equal(workbenchErrorCode(refused), 'STATE_INVALID', textOf(refused));
      assert.ok(textOf(refused).includes(`${stateFile} is invalid at line 1`), textOf(refused));
      assert.match(textOf(refused), /no tool is called while the tool state file cannot be trusted/);
      const opened = await wb.call('open_toolbox', { toolbox_name: 'tb' });
      assert.equal(opened.isError, true, 'no last good state: open_toolbox answers with the problem');
      assert.equal(workbenchErrorCode(opened), 'STATE_INVALID');
      assert.equal(await readFile(stateFile, 'utf8'), broken, 'the file itself is never touched');
      const copy = (await readdir(dir)).find((f) => f.startsWith('tool-state.json.corrupt-'));
      assert.ok(copy, 'a copy of the broken content is kept beside it');
      assert.equal(await readFile(join(dir, copy), 'utf8'), broken);

      // Fixed (a trailing comma is fine: JSONC): its content applies without a restart.
      await writeFile(stateFile, '{ "disabled": [ "tb__fx__echo", ] }');
      assert.ok(await waitFor(async () => (await wb.useTool('tb', 'tb__fx__pid', {})).isError !== true, 10_000), 'calls resume');
      assert.equal(workbenchErrorCode(await wb.useTool('tb', 'tb__fx__echo', { text: 'x' })), 'TOOL_DISABLED');
    } finally {
      await wb.close();
    }
  });

  it('follows `mcp-workbench tools disable` from another process without restart', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const stateFile = join(dir, 'tool-state.json');
    const wb = await startWorkbench(config, { args: ['--state-file', stateFile] });
    try {
      assert.ok((await toolNames(wb)).includes('tb__fx__pid'));
      const run = cli(['tools', 'disable', 'tb__fx__pid', '--state-file', stateFile, '--config', wb.configPath]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /disabled: tb__fx__pid/);
      assert.ok(await waitFor(async () => !(await toolNames(wb)).includes('tb__fx__pid'), 5000), 'the running server applied the change');
      assert.equal(workbenchErrorCode(await wb.useTool('tb', 'tb__fx__pid', {})), 'TOOL_DISABLED');

      // A hand edit works too.
      await writeFile(stateFile, JSON.stringify({ enabled: [], disabled: [] }, null, 2));
      assert.ok(await waitFor(async () => (await toolNames(wb)).includes('tb__fx__pid'), 5000), 'the edit was applied');
    } finally {
      await wb.close();
    }
  });
});

describe('mcp-workbench tools', () => {
  it('lists every tool with its status and source, and enables, disables and resets', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const configPath = join(dir, 'workbench-config.json');
    await writeFile(configPath, JSON.stringify(config));
    const stateFile = join(dir, 'state', 'tool-state.json');
    await mkdir(join(dir, 'state'));
    const env = { WORKBENCH_CONFIG: configPath, WORKBENCH_STATE_FILE: stateFile };

    assert.equal(cli(['tools', 'disable', 'tb__fx__add', 'tb__fx__hang'], env).code, 0);
    const listed = cli(['tools', 'list', '--json', '--disabled-tools', 'tb__fx__slow'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const report = JSON.parse(listed.stdout) as ToolStatusReport & { state_file: string };
    const byName = new Map(report.tools.map((t) => [t.name, t]));
    assert.equal(report.state_file, stateFile);
    assert.equal(byName.get('tb__fx__echo')?.enabled, true);
    assert.equal(byName.get('tb__fx__add')?.disabled_by?.source, 'state');
    assert.equal(byName.get('tb__fx__slow')?.disabled_by?.source, 'cli');
    assert.equal(byName.get('tb__fx__crash')?.disabled_by?.source, 'config');

    const text = cli(['tools', 'list', '--toolbox', 'tb'], env);
    assert.match(text.stdout, /tb__fx__add\s+disabled \(state\)/);
    assert.match(text.stdout, /tb__fx__echo\s+enabled/);

    // A name that matches no tool is refused (a typo would look done and hide nothing); --force records it.
    assert.equal(cli(['tools', 'disable', 'nobox__x__y'], env).code, 2);
    const unknown = cli(['tools', 'disable', '--force', 'nobox__x__y', '--json'], env);
    assert.equal(unknown.code, 0, unknown.stderr);
    assert.deepEqual((JSON.parse(unknown.stdout) as { unknown: string[] }).unknown, ['nobox__x__y'], 'recorded, and reported as not (yet) known');

    const protectedName = cli(['tools', 'disable', 'use_tool'], { ...env, WORKBENCH_LOG_FORMAT: 'json' });
    assert.equal(protectedName.code, 2);
    assert.equal(errorLine(protectedName.stderr).fields.code, 'USAGE');
    assert.match(errorLine(protectedName.stderr).message, /use_tool: the workbench's meta-tools are protected/);

    const invalid = cli(['tools', 'disable', 'github'], { ...env, WORKBENCH_LOG_FORMAT: 'json' });
    assert.equal(invalid.code, 2);
    assert.equal(errorLine(invalid.stderr).fields.code, 'USAGE');
    // the message is the product: it must offer the glob meant
    assert.match(errorLine(invalid.stderr).message, /github__\*/);

    assert.equal(cli(['tools', 'reset'], env).code, 0);
    assert.deepEqual(JSON.parse(await readFile(stateFile, 'utf8')), { enabled: [], disabled: [] });
  });
});

describe('list_all_tools with a toolset name (open_toolbox and use_tool take one too)', () => {
  it('lists the tools the toolset holds with their statuses; an unknown name is refused naming toolboxes and toolsets', async () => {
    const withToolset = { ...config, toolsets: { quick: { description: 'two tools', tools: ['tb__fx__add', 'tb__fx__crash'] } } };
    const wb = await startWorkbench(withToolset, { args: ['--management-tools'] });
    try {
      const listed = await wb.call('list_all_tools', { toolbox: 'quick' });
      assert.notEqual(listed.isError, true, textOf(listed));
      const tools = structuredAnswer<ToolStatusReport>(listed, 'tools').tools;
      assert.deepEqual(tools.map((t) => [t.name, t.enabled]).sort(), [['tb__fx__add', true], ['tb__fx__crash', false]]);
      const unknown = await wb.call('list_all_tools', { toolbox: 'nope' });
      assert.equal(workbenchErrorCode(unknown), 'TOOLBOX_NOT_FOUND');
      assert.match(textOf(unknown), /Available toolboxes and toolsets: tb, quick/);
    } finally {
      await wb.close();
    }
  });
});

// README "Protocol eras", "What is one for everyone": the tool-state file is the workbench's, not a user's, so over
// --http one token holder's enable_tools changes what every user may call — as documented, not by accident.
describe('management tools over --http with several tokens', () => {
  it("one user's enable_tools changes what another user may call (the state file is one per workbench)", async () => {
    const tokens = ['alice-0123456789abcdef0123456789ab', 'bob-0123456789abcdef0123456789abcd'];
    const wb = await startHttpWorkbench(config, ['--http', '0', '--management-tools'], { WORKBENCH_TOKEN: tokens.join(',') });
    const [alice, bob] = [await wb.connect({ Authorization: `Bearer ${tokens[0]}` }), await wb.connect({ Authorization: `Bearer ${tokens[1]}` })];
    const echo = (s: typeof alice) =>
      s.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'tb__fx__echo', arguments: { text: 'hi' } } }) as Promise<CallToolResult>;
    try {
      assert.notEqual((await echo(alice)).isError, true);
      const changed = (await bob.client.callTool({ name: 'enable_tools', arguments: { disable: ['tb__fx__echo'] } })) as CallToolResult;
      assert.notEqual(changed.isError, true, textOf(changed));
      const refused = await echo(alice);
      assert.equal(refused.isError, true, textOf(refused));
      assert.equal(workbenchErrorCode(refused), 'TOOL_DISABLED');
    } finally {
      await Promise.allSettled([alice.close(), bob.close()]);
      await wb.stop();
    }
  });
});
