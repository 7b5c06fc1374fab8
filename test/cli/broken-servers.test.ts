import assert from 'node:assert/strict';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import type { DoctorReport } from '../../src/doctor/types.js';
import { TRANSPORTS, startOver } from '../helpers/both-transports.js';
import { runCliAsync as run } from '../helpers/cli-run.js';
import { errorLine, logLines, type LogLine } from '../helpers/log-lines.js';
import { fixtureEvents, fixtureServer, node, paths, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

/**
 * README "Configuration" (one bad part fails only itself): a server with an unset variable, a missing command or a
 * malformed URL fails alone, named with its fix wherever it shows up; the rest of its toolbox works.
 */

/** Never set in any test environment (the helpers pass PATH, HOME and what a test adds). */
const UNSET = 'WB_BROKEN_TEST_UNSET';
const MISSING_COMMAND = 'wb-no-such-command-7f3a';
const MISSING_DIR = '/nonexistent-wb-dir-7f3a';
const WITHIN = 20_000;

/** The start warnings about servers that cannot start, read from the JSON log (README "Command line", Logs). */
function brokenWarnings(stderr: string): LogLine[] {
  return logLines(stderr).filter((line) => line.fields.event === 'server_broken');
}

/** One healthy server beside one of each broken kind. `spawnLog` is where the unset-variable server would log a start. */
function mixedConfig(spawnLog: string): { toolboxes: Record<string, { mcpServers: Record<string, unknown> }> } {
  return {
    toolboxes: {
      mix: {
        mcpServers: {
          healthy: fixtureServer(),
          needsvar: { command: node, args: [paths.fixture, '--log', spawnLog, '--name', `\${${UNSET}}`] },
          nocmd: { command: MISSING_COMMAND },
          nocwd: { ...fixtureServer(), cwd: MISSING_DIR },
          badurl: { type: 'http', url: 'http//missing-colon.example/mcp' },
        },
      },
    },
  };
}

function failedServer(result: OpenToolboxResult, server: string): OpenToolboxResult['servers_failed'][number] {
  const found = result.servers_failed.find((f) => f.server === server || f.server.endsWith(`/${server}`));
  assert.ok(found, `${server} is listed in servers_failed: ${JSON.stringify(result.servers_failed)}`);
  return found;
}

/** What a broken server's failure must say: what is wrong, where, and the fix. */
function assertNamesEachFix(result: OpenToolboxResult): void {
  const needsvar = failedServer(result, 'needsvar');
  assert.equal(needsvar.code, 'ENV_MISSING');
  assert.equal(needsvar.failure?.kind, 'misconfigured');
  assert.deepEqual(needsvar.failure?.problems?.map((p) => [p.kind, p.path, p.variables]), [
    ['env-missing', 'toolboxes.mix.mcpServers.needsvar.args[4]', [UNSET]],
  ]);
  // What is wrong in `error`, the fix once, in its problem (the hint points there rather than repeating it).
  assert.match(needsvar.error, new RegExp(`\\$\\{${UNSET}\\} is not set`));
  assert.match(needsvar.failure?.problems?.[0]?.fix ?? '', new RegExp(`set ${UNSET} in the environment the workbench starts with`));
  assert.match(needsvar.failure?.problems?.[0]?.fix ?? '', new RegExp(`\\$\\{${UNSET}:-value\\}`));
  assert.match(needsvar.hint ?? '', /failure\.problems/);
  assert.doesNotMatch(needsvar.error, /To fix/);

  const nocmd = failedServer(result, 'nocmd');
  assert.equal(nocmd.failure?.kind, 'command-not-found');
  assert.match(nocmd.error, new RegExp(`command "${MISSING_COMMAND}" was not found on the PATH`));
  assert.match(nocmd.hint ?? '', /install it, or fix "command"/);
  assert.doesNotMatch(nocmd.error, /install/i, 'what to do is said once, in the hint');

  // spawn reports a missing working directory as ENOENT too; it is named for what it is.
  const nocwd = failedServer(result, 'nocwd');
  assert.match(nocwd.error, new RegExp(`its working directory "${MISSING_DIR}" does not exist`));
  assert.equal(nocwd.failure?.kind, 'cwd-not-found');

  const badurl = failedServer(result, 'badurl');
  assert.equal(badurl.code, 'CONFIG_INVALID');
  assert.equal(badurl.failure?.problems?.[0]?.kind, 'invalid-url');
  assert.match(badurl.error, /toolboxes\.mix\.mcpServers\.badurl\.url: must be an absolute http:\/\/ or https:\/\/ URL/);
  assert.match(badurl.failure?.problems?.[0]?.fix ?? '', /write the endpoint in full/);
}

for (const transport of TRANSPORTS) {
  describe(`a toolbox with broken servers over ${transport}`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let wb: Awaited<ReturnType<typeof startOver>>;
    const spawnLog = (): string => join(data.dir, 'needsvar.log');

    before(async () => {
      data = await tempDir();
      wb = await startOver(transport, mixedConfig(spawnLog()), [], { WORKBENCH_LOG_FORMAT: 'json' });
    });
    after(async () => {
      await wb.close();
      await data.cleanup();
    });

    it('starts, warning once about each server whose config entry cannot start, with the fix', async () => {
      assert.ok(await waitFor(() => brokenWarnings(wb.stderr()).length >= 2, WITHIN), wb.stderr());
      const warnings = brokenWarnings(wb.stderr());
      const byServer = new Map(warnings.map((w) => [w.fields.server, w]));
      assert.deepEqual([...byServer.keys()].sort(), ['badurl', 'needsvar'], 'the entries whose config is wrong (a missing command or directory is found at start)');
      assert.ok(warnings.every((w) => w.level === 'warn' && w.fields.toolbox === 'mix'));
      assert.equal(byServer.get('needsvar')!.fields.code, 'ENV_MISSING');
      assert.equal(byServer.get('needsvar')!.fields.paths, 'toolboxes.mix.mcpServers.needsvar.args[4]');
      assert.equal(byServer.get('needsvar')!.fields.variables, UNSET);
      assert.equal(byServer.get('badurl')!.fields.variables, undefined);
      assert.equal(byServer.get('badurl')!.fields.code, 'CONFIG_INVALID');
      // the message is the product: a person reading the log learns the fix
      assert.match(byServer.get('needsvar')!.message, new RegExp(`set ${UNSET} in the environment`));
    });

    it('open_toolbox shows the healthy tools and names each broken server with its fix', async () => {
      const result = await wb.call('open_toolbox', { toolbox_name: 'mix', detail: 'full' });
      assert.notEqual(result.isError, true, textOf(result));
      const opened = result.structuredContent as OpenToolboxResult;
      assert.deepEqual(opened.servers_connected, ['healthy']);
      assert.ok(opened.tools.some((t) => t.name === 'mix__healthy__echo'), 'the healthy server\'s tools are shown');
      assert.deepEqual(opened.servers_failed.map((f) => f.server).sort(), ['badurl', 'needsvar', 'nocmd', 'nocwd']);
      assertNamesEachFix(opened);
      assert.match(textOf(result), new RegExp(UNSET), 'the text form names the variable too');
    });

    it('use_tool on the healthy server works; on the broken one it names the variable, and nothing is spawned for it', async () => {
      assert.equal(textOf(await wb.useTool('mix', 'mix__healthy__echo', { text: 'still works' })), 'still works');
      const refused = await wb.useTool('mix', 'mix__needsvar__echo', { text: 'x' });
      assert.equal(refused.isError, true);
      assert.equal(workbenchErrorCode(refused), 'ENV_MISSING');
      assert.match(textOf(refused), new RegExp(`\\$\\{${UNSET}\\} is not set`));
      assert.deepEqual(await fixtureEvents(spawnLog()), [], 'the server with an unset variable was never started');
    });

    it('a search lists the broken servers among its failures, with the fix', async () => {
      const result = await wb.call('open_toolbox', { query: 'echo' });
      assert.notEqual(result.isError, true, textOf(result));
      assertNamesEachFix(result.structuredContent as OpenToolboxResult);
    });

    it('a search again within a minute says the broken servers were not started again, never that a retry would mend them', async () => {
      await wb.call('open_toolbox', { query: 'echo' });
      const again = (await wb.call('open_toolbox', { query: 'echo' })).structuredContent as OpenToolboxResult;
      assertNamesEachFix(again);
      for (const server of ['needsvar', 'badurl', 'nocmd']) {
        const failed = failedServer(again, server);
        assert.equal(failed.retryable, false, JSON.stringify(failed));
        assert.match(failed.error, /not started again for this search/);
        assert.doesNotMatch(failed.error, /tries again/, `a failure no retry mends invites none: ${failed.error}`);
      }
    });

    it('logs the start warning once however often the server is asked for', async () => {
      await wb.call('open_toolbox', { toolbox_name: 'mix' });
      const count = brokenWarnings(wb.stderr()).filter((w) => w.fields.server === 'needsvar').length;
      assert.equal(count, 1, wb.stderr());
    });
  });
}

describe('a server whose command is missing, asked for again and again', () => {
  it('is warned about once per cause, each call still failing with the fix; again once it has started in between', async () => {
    const data = await tempDir();
    // An absolute command that is missing at first, then a script that starts the fixture, then missing again.
    const command = join(data.dir, 'wb-late-command');
    const wb = await startOver('stdio', { toolboxes: { mix: { mcpServers: { healthy: fixtureServer(), late: { command } } } } }, [], { WORKBENCH_LOG_FORMAT: 'json' });
    const missingWarnings = (): LogLine[] =>
      logLines(wb.stderr()).filter((line) => line.level === 'warn' && line.scope === 'mix/late' && line.message.includes(`command "${command}" does not exist`));
    try {
      for (let i = 0; i < 3; i++) {
        const refused = await wb.useTool('mix', 'mix__late__echo', { text: 'x' });
        assert.equal(refused.isError, true);
        assert.match(textOf(refused), new RegExp(`command "${command}" does not exist`), 'each call says why, whether or not it is logged');
      }
      assert.equal(missingWarnings().length, 1, wb.stderr());

      await writeFile(command, `#!/bin/sh\nexec "${node}" "${paths.fixture}" "$@"\n`, { mode: 0o755 });
      assert.ok(await waitFor(async () => textOf(await wb.useTool('mix', 'mix__late__echo', { text: 'up' })) === 'up', WITHIN), wb.stderr());
      await rm(command);
      await wb.useTool('mix', 'mix__late__crash', {});
      // It started in between: the same cause is news again, once.
      assert.ok(await waitFor(async () => /does not exist/.test(textOf(await wb.useTool('mix', 'mix__late__echo', { text: 'x' }))), WITHIN), wb.stderr());
      await wb.useTool('mix', 'mix__late__echo', { text: 'x' });
      assert.equal(missingWarnings().length, 2, wb.stderr());
    } finally {
      await wb.close();
      await data.cleanup();
    }
  });
});

describe('commands on a config with broken servers', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let mixed: string;
  let allBroken: string;

  before(async () => {
    data = await tempDir();
    mixed = join(data.dir, 'mixed.json');
    allBroken = join(data.dir, 'all-broken.json');
    await writeFile(mixed, JSON.stringify(mixedConfig(join(data.dir, 'needsvar.log'))));
    await writeFile(
      allBroken,
      JSON.stringify({
        toolboxes: {
          a: { mcpServers: { one: { command: node, args: ['${WB_BROKEN_FIRST}'] } } },
          b: { mcpServers: { two: { type: 'http', url: 'https://example.test/${WB_BROKEN_SECOND}', headers: { 'X-Org': '${WB_BROKEN_THIRD}' } } } },
        },
      }),
    );
  });
  after(() => data.cleanup());

  const env = (): Record<string, string> => ({ WORKBENCH_STATE_FILE: join(data.dir, 'state.json'), MCP_WORKBENCH_CACHE_DIR: join(data.dir, 'cache') });

  it('serve (stdio and --http) refuses to start when no server could ever start, naming every missing variable at once', async () => {
    for (const args of [[], ['--http', '127.0.0.1:0']]) {
      const { code, stdout, stderr } = await run(['serve', '--config', allBroken, ...args], { ...env(), WORKBENCH_LOG_FORMAT: 'json' });
      assert.equal(code, 1, stderr);
      assert.equal(stdout, '');
      const refused = errorLine(stderr);
      assert.equal(refused.fields.code, 'ENV_MISSING');
      // the message is the product: it must name every missing variable at once, and where each is used
      assert.match(refused.message, /WB_BROKEN_FIRST, WB_BROKEN_SECOND, WB_BROKEN_THIRD/);
      assert.ok(refused.message.includes('toolboxes.b.mcpServers.two.headers.X-Org: ${WB_BROKEN_THIRD}'), refused.message);
    }
  });

  it('validate exits 1 listing every server problem, in text and JSON', async () => {
    const text = await run(['validate', '--config', mixed], env());
    assert.equal(text.code, 1);
    // validate's text report is the product: it must name the path of each problem
    assert.match(text.stderr, new RegExp(`toolboxes\\.mix\\.mcpServers\\.needsvar\\.args\\[4\\]: \\$\\{${UNSET}\\} is not set`));
    assert.match(text.stderr, /toolboxes\.mix\.mcpServers\.badurl\.url: must be an absolute/);
    const json = await run(['validate', '--config', mixed, '--json'], env());
    assert.equal(json.code, 1);
    const report = JSON.parse(json.stdout) as { valid: boolean; code: string; details: string[] };
    assert.equal(report.valid, false);
    assert.equal(report.code, 'CONFIG_INVALID');
    assert.deepEqual(report.details.map((d) => d.slice(0, d.indexOf(':'))).sort(), [
      'toolboxes.mix.mcpServers.badurl.url',
      'toolboxes.mix.mcpServers.needsvar.args[4]',
      'toolboxes.mix.mcpServers.nocmd.command',
      'toolboxes.mix.mcpServers.nocwd.cwd',
    ]);
    // a command that is not installed and a cwd that does not exist: where the server would start them
    assert.match(text.stderr, new RegExp(`toolboxes\\.mix\\.mcpServers\\.nocmd\\.command: "${MISSING_COMMAND}" was not found on the PATH the server starts with; to fix: install it`));
    assert.match(text.stderr, /toolboxes\.mix\.mcpServers\.nocwd\.cwd: ".*" does not exist/);
  });

  it('validate finds a command where the server starts it: on its own env.PATH, or relative to its cwd', async () => {
    const bin = join(data.dir, 'own-bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'wb-own-command'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const file = join(data.dir, 'found.json');
    await writeFile(file, JSON.stringify({
      toolboxes: {
        t: {
          mcpServers: {
            ownpath: { command: 'wb-own-command', env: { PATH: bin } },
            relative: { command: './wb-own-command', cwd: bin },
          },
        },
      },
    }));
    const found = await run(['validate', '--config', file], env());
    assert.equal(found.code, 0, found.stderr);
    // the same command off the PATH the server gets: the entry's own PATH names it
    await writeFile(file, JSON.stringify({ toolboxes: { t: { mcpServers: { ownpath: { command: 'wb-own-command', env: { PATH: data.dir } } } } } }));
    const missing = await run(['validate', '--config', file], env());
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /toolboxes\.t\.mcpServers\.ownpath\.command: "wb-own-command" was not found on the PATH the server starts with \(its own env\.PATH\)/);
  });

  it('validate names every problem in one run: a structural one, a sound server\'s missing command, and the project file\'s', async () => {
    const folder = join(data.dir, 'all-at-once');
    await mkdir(folder, { recursive: true });
    const file = join(folder, 'config.json');
    await writeFile(file, JSON.stringify({
      toolboxes: {
        t: {
          mcpServers: {
            typo: { command: 'node', argz: [] },
            nocmd: { command: MISSING_COMMAND },
            fine: { command: 'node', args: ['-e', ''] },
          },
        },
      },
    }));
    await writeFile(join(folder, '.mcp-workbench.json'), JSON.stringify({ disabledTools: 'all' }));
    const json = await run(['validate', '--config', file, '--project', folder, '--json'], env());
    assert.equal(json.code, 1, json.stderr);
    const report = JSON.parse(json.stdout) as { code: string; details: string[] };
    assert.equal(report.code, 'CONFIG_INVALID');
    const joined = report.details.join('\n');
    assert.match(joined, /toolboxes\.t\.mcpServers\.typo/, 'the structural problem');
    assert.match(joined, new RegExp(`toolboxes\\.t\\.mcpServers\\.nocmd\\.command: "${MISSING_COMMAND}" was not found on the PATH`), 'the sound server\'s missing command');
    assert.doesNotMatch(joined, /mcpServers\.typo\.command/, 'the entry with a problem of its own is not looked into');
    assert.match(joined, /project file .*\.mcp-workbench\.json, disabledTools/, 'the project file\'s problem');
    // Once the structure is fixed, the same run still names the project file beside the server problem.
    await writeFile(file, JSON.stringify({ toolboxes: { t: { mcpServers: { nocmd: { command: MISSING_COMMAND } } } } }));
    const second = JSON.parse((await run(['validate', '--config', file, '--project', folder, '--json'], env())).stdout) as { details: string[] };
    assert.match(second.details.join('\n'), /nocmd\.command: .*\n.*project file .*disabledTools/);
  });

  it('doctor reports each broken server with what is wrong and the fix, and the healthy one as connected', async () => {
    const json = await run(['doctor', '--config', mixed, '--json'], env());
    assert.equal(json.code, 1, json.stderr);
    const report = JSON.parse(json.stdout) as DoctorReport;
    const server = (name: string) => report.toolboxes[0]!.servers.find((s) => s.server === name)!;
    assert.equal(server('healthy').connected, true);
    assert.equal(server('needsvar').failure?.kind, 'misconfigured');
    assert.equal(server('needsvar').failure?.summary, `config problem: unset variable ${UNSET}`);
    assert.deepEqual(server('needsvar').failure?.problems?.[0]?.variables, [UNSET]);
    assert.equal(server('badurl').failure?.kind, 'misconfigured');
    assert.equal(server('nocmd').failure?.kind, 'command-not-found');
    // A missing working directory is said as such, not as a missing command.
    assert.equal(server('nocwd').failure?.summary, 'working directory not found');
    const text = await run(['doctor', '--config', mixed], env());
    assert.match(text.stdout, new RegExp(`\\[FAIL\\] mix/needsvar: not connected — config problem: unset variable ${UNSET}`));
    assert.match(text.stdout, new RegExp(`To fix: set ${UNSET} in the environment the workbench starts with`));
    assert.match(text.stdout, new RegExp(`command "${MISSING_COMMAND}" was not found`));
    assert.match(text.stdout, /\[ok\] {3}mix\/healthy/);
  });
});

describe('a broken server and the catalog cache', () => {
  it('is never shown from a catalog cached while it worked', async () => {
    const data = await tempDir();
    try {
      const cache = join(data.dir, 'catalog-cache');
      // The cache key holds env names, not values: the entry is the same whether the variable is set or not.
      const config = { toolboxes: { fx: { mcpServers: { healthy: fixtureServer(), moody: { ...fixtureServer('--name', 'moody'), env: { MODE: '${WB_BROKEN_MODE}' } } } } } };
      const first = await startOver('stdio', config, [], { MCP_WORKBENCH_CACHE_DIR: cache, WB_BROKEN_MODE: 'on' });
      try {
        const opened = (await first.call('open_toolbox', { toolbox_name: 'fx' })).structuredContent as OpenToolboxResult;
        assert.deepEqual(opened.servers_connected, ['healthy', 'moody']);
        assert.ok(await waitFor(async () => (await readdir(cache).catch(() => [])).length >= 2, WITHIN), 'both catalogs were cached');
      } finally {
        await first.close();
      }
      const second = await startOver('stdio', config, [], { MCP_WORKBENCH_CACHE_DIR: cache });
      try {
        const opened = (await second.call('open_toolbox', { toolbox_name: 'fx' })).structuredContent as OpenToolboxResult;
        assert.deepEqual(failedServer(opened, 'moody').failure?.problems?.[0]?.variables, ['WB_BROKEN_MODE']);
        assert.ok(!opened.tools.some((t) => t.name.startsWith('fx__moody__')), 'no tool of the broken server is offered');
      } finally {
        await second.close();
      }
    } finally {
      await data.cleanup();
    }
  });
});

describe('live reload that breaks one server', () => {
  it('applies the edit with that server broken; an edit that leaves no server able to start is refused', async () => {
    const healthy = fixtureServer();
    const other = fixtureServer('--name', 'other');
    const wb = await startOver('stdio', { toolboxes: { fx: { mcpServers: { healthy, other } } } });
    try {
      assert.equal(textOf(await wb.useTool('fx', 'fx__other__echo', { text: 'before' })), 'before');
      await writeFile(wb.configPath, JSON.stringify({ toolboxes: { fx: { mcpServers: { healthy, other: { ...other, args: [...other.args, `\${${UNSET}}`] } } } } }));
      let opened: OpenToolboxResult | undefined;
      const applied = await waitFor(async () => {
        opened = (await wb.call('open_toolbox', { toolbox_name: 'fx' })).structuredContent as OpenToolboxResult;
        return opened.servers_failed.some((f) => f.server === 'other');
      }, WITHIN);
      assert.ok(applied && opened, `the edit applied, with "other" among the failed servers: ${JSON.stringify(opened)}\n${wb.stderr()}`);
      assert.equal(failedServer(opened, 'other').failure?.kind, 'misconfigured');
      assert.deepEqual(opened.servers_connected, ['healthy']);
      assert.deepEqual(failedServer(opened, 'other').failure?.problems?.[0]?.variables, [UNSET]);
      assert.equal(textOf(await wb.useTool('fx', 'fx__healthy__echo', { text: 'after' })), 'after');

      await writeFile(wb.configPath, JSON.stringify({ toolboxes: { fx: { mcpServers: { healthy: { ...healthy, cwd: '${WB_BROKEN_CWD}' } } } } }));
      let warned: (OpenToolboxResult & { config_warning?: string }) | undefined;
      const refused = await waitFor(async () => {
        warned = (await wb.call('open_toolbox', { toolbox_name: 'fx' })).structuredContent as OpenToolboxResult & { config_warning?: string };
        return warned.config_warning !== undefined;
      }, WITHIN);
      assert.ok(refused, `open_toolbox says the edit is not applied: ${JSON.stringify(warned)}\n${wb.stderr()}`);
      assert.ok(warned!.config_warning!.includes('WB_BROKEN_CWD'), warned!.config_warning);
      assert.equal(textOf(await wb.useTool('fx', 'fx__healthy__echo', { text: 'kept' })), 'kept', 'the previous config keeps serving');
    } finally {
      await wb.close();
    }
  });
});
