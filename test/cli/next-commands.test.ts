import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dirPerTest, runCliAsync } from '../helpers/cli-run.js';
import { fixtureServer } from '../helpers/workbench-process.js';

/**
 * An error that tells a person which command to run next names one that works as printed: the commands that list
 * tools need the config named (README "Use it from your MCP client", `CONFIG_NOT_NAMED`), so the hint carries it.
 * Where the model is told a tool call to make (open_toolbox, use_tool), a person at the CLI is told a command to run
 * (README "Command line").
 */

const own = dirPerTest('wb-next-commands-');

const run = (args: string[]) =>
  runCliAsync(args, { HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache'), WORKBENCH_STATE_FILE: join(own.dir, 'state.json') }, { cwd: own.dir });

/**
 * Toolboxes a test adds only when it calls them (listing every tool would wait for `slow`, and `held` and `odd` are
 * warned about): `held`'s server is held until its tools are approved, `odd`'s lists a tool it cannot be called by,
 * `big`'s has a tool of a long inputSchema ({@link WIDE}), and `slow`'s never finishes its handshake — a call waits for
 * it briefly, then is told it is still starting. `gone`'s server cannot start (its command is nowhere), `hung`'s never
 * finishes its handshake within its short connect limit, `unset`'s uses a variable the environment lacks, and `far`'s
 * is a remote server nothing answers for.
 */
/** A tool whose inputSchema is too long to show the model with a refusal (over 4,000 characters). */
const WIDE = {
  name: 'wide',
  description: 'A tool of many parameters.',
  inputSchema: {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`p${i}`, { type: 'string', description: `Parameter number ${i} of this tool, described at some length.` }])),
    required: ['p0'],
  },
};

const OPTIONAL = {
  held: { mcpServers: { q: { ...fixtureServer(), quarantine: true } } },
  odd: { mcpServers: { m: fixtureServer('--malformed') } },
  big: { mcpServers: { b: { ...fixtureServer(), env: { FIXTURE_TOOL_DEFS: JSON.stringify([WIDE]) } } } },
  slow: { useToolWaitMs: 1000, openWaitMs: 300, mcpServers: { s: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 60_000 } } },
  gone: { mcpServers: { g: { command: 'mcp-workbench-test-no-such-command' } } },
  hung: { mcpServers: { h: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 500 } } },
  unset: { mcpServers: { e: { ...fixtureServer(), env: { FIXTURE_UNUSED: '${MCP_WORKBENCH_TEST_NEVER_SET}' } } } },
  // Port 1 of the loopback: nothing listens there, the connect is refused at once.
  far: { mcpServers: { r: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } },
};

/** The config of a test: `fx` adds settings to toolbox fx; `box` one of the toolboxes {@link OPTIONAL}. */
async function writeConfig(fx: Record<string, unknown> = {}, box?: keyof typeof OPTIONAL): Promise<string> {
  const config = join(own.dir, 'workbench-config.json');
  const toolsets = { quick: { description: 'the echo tool', tools: ['fx__f__echo'] }, pair: { description: 'two pids', tools: ['two__*__pid'] } };
  const toolboxes = {
    fx: { ...fx, mcpServers: { f: fixtureServer() } },
    two: { mcpServers: { a: fixtureServer(), b: fixtureServer() } },
  };
  await writeFile(config, JSON.stringify({ toolboxes: { ...toolboxes, ...(box && { [box]: OPTIONAL[box] }) }, toolsets }));
  return config;
}

/** The words of a command as a shell would split them: at spaces, with single-quoted words kept whole. */
function shellWords(command: string): string[] {
  return [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!));
}

/** The first `mcp-workbench …` command an error names whose words start with `prefix`, run as printed. */
async function runSuggested(text: string, prefix: string): Promise<{ command: string; code: number | null; stdout: string; stderr: string }> {
  const commands = [...text.matchAll(/`mcp-workbench ([^`]*)`|"mcp-workbench ([^"]*)"/g)].map((m) => m[1] ?? m[2]!);
  const command = commands.find((c) => c.startsWith(prefix));
  assert.ok(command, `no ${prefix} command in: ${text}`);
  const result = await run(shellWords(command));
  return { command, code: result.code, stdout: result.stdout, stderr: result.stderr };
}

/** What the model is told to do, which a person at a terminal cannot: tool calls, and "tell the user". */
const MODEL_ADVICE = /open_toolbox|use_tool (with|one)|Call use_tool|toolbox_name|enable_tools|tell the user|Call the tool|of the workbench/i;

describe('commands an error says to run next', () => {
  // The same refusals through use_tool keep the model's advice (test/core/error-model.test.ts): "Call open_toolbox …".
  const refusals: [string, string[]][] = [
    ['tools disable of a name that matches nothing', ['tools', 'disable', 'fx__f__ech']],
    ['tools approve of a glob that matches nothing', ['tools', 'approve', 'zz*']],
    ['tools search with --disabled-tools that hides nothing', ['tools', 'search', 'echo', '--disabled-tools', 'echo']],
    ['tools list --toolset of a toolset the config lacks', ['tools', 'list', '--toolset', 'nope']],
    ['tools search --toolbox of a toolbox the config lacks', ['tools', 'search', 'echo', '--toolbox', 'nope']],
  ];
  for (const [what, args] of refusals) {
    it(`${what} names a tools list that runs, not open_toolbox`, async () => {
      const config = await writeConfig();
      const result = await run([...args, '--config', config]);
      assert.equal(result.code, 2, result.stderr);
      assert.doesNotMatch(result.stderr, MODEL_ADVICE);
      const next = await runSuggested(result.stderr, 'tools list');
      assert.equal(next.code, 0, `${next.command}: ${next.stderr}`);
    });
  }

  /**
   * Every refusal `tools call` can meet in use_tool's pipeline: the exit code README "Command line" gives (2 for an
   * unknown toolbox, said on stderr only; 1 for a refused call, whose result is printed), none of the model's advice
   * anywhere, and the command it names next, run as printed, exits as that command documents.
   */
  interface CallRefusal {
    args: string[];
    code: 1 | 2;
    /** The start of the command named next, and how it exits when run; or what the refusal shows instead (`shows`). */
    next?: string;
    nextCode?: number;
    shows?: RegExp;
    state?: unknown;
    /** Settings of toolbox fx. */
    fx?: Record<string, unknown>;
    project?: unknown;
    box?: keyof typeof OPTIONAL;
  }
  const calls: [string, CallRefusal][] = [
    ['a toolbox the config lacks', { args: ['nope', 'pid'], code: 2, next: 'tools list', nextCode: 0 }],
    ['a name the toolbox lacks', { args: ['fx', 'nosuch'], code: 1, next: 'tools list', nextCode: 0 }],
    ['a server the toolbox lacks', { args: ['fx', 'fx__zz__echo'], code: 2, next: 'tools list', nextCode: 0 }],
    // The same full name through another toolbox or a toolset: still a server its toolbox (fx) does not have.
    ['a server the toolbox lacks, through another toolbox', { args: ['two', 'fx__zz__echo'], code: 2 }],
    ['a server the toolbox lacks, through a toolset', { args: ['quick', 'fx__zz__echo'], code: 2 }],
    ['a name the toolset lacks', { args: ['quick', 'nosuch'], code: 1, next: 'tools list', nextCode: 0 }],
    ['a tool of another toolbox', { args: ['fx', 'two__a__pid'], code: 1, next: 'tools call two two__a__pid', nextCode: 0 }],
    ['a pattern under another toolbox', { args: ['fx', 'two__a__p*'], code: 1, next: 'tools list', nextCode: 0 }],
    ['a name two servers of the toolbox have', { args: ['two', 'pid'], code: 1, next: 'tools call two two__a__pid', nextCode: 0 }],
    ['a name two tools of the toolset have', { args: ['pair', 'pid'], code: 1, next: 'tools call pair two__a__pid', nextCode: 0 }],
    ['a full name outside the toolset', { args: ['quick', 'fx__f__pid'], code: 1, next: 'tools call fx fx__f__pid', nextCode: 0 }],
    ['a tool its server lists but the workbench left out', { args: ['odd', 'odd__m__no_schema'], code: 1, next: 'tools list', nextCode: 0, box: 'odd' }],
    ['a server still starting (full name)', { args: ['slow', 'slow__s__pid'], code: 1, next: 'tools call slow slow__s__pid', nextCode: 1, box: 'slow' }],
    ['a server still starting whose tools are not known (bare name)', { args: ['slow', 'pid'], code: 1, next: 'tools call slow slow__s__pid', nextCode: 1, box: 'slow' }],
    ['a tool the state file disables', { args: ['fx', 'fx__f__pid'], code: 1, next: 'tools enable fx__f__pid', nextCode: 0, state: { enabled: [], disabled: ['fx__f__pid'] } }],
    ['a tool --disabled-tools hides', { args: ['fx', 'fx__f__pid', '--disabled-tools', 'fx__f__pid'], code: 1, next: 'tools call fx fx__f__pid', nextCode: 0 }],
    ['a tool --toolset leaves out', { args: ['fx', 'fx__f__pid', '--toolset', 'quick'], code: 1, next: 'tools call fx fx__f__pid', nextCode: 0 }],
    ['a tool the config disables', { args: ['fx', 'fx__f__pid'], code: 1, next: 'validate', nextCode: 0, fx: { disabledTools: ['fx__f__pid'] } }],
    ['a tool the project file disables', { args: ['fx', 'fx__f__pid'], code: 1, next: 'validate', nextCode: 0, project: { disabledTools: ['fx__f__pid'] } }],
    ['arguments that do not match a long inputSchema', { args: ['big', 'big__b__wide'], code: 1, shows: /inputSchema: \{.*"p79"/, box: 'big' }],
    ['a tool held until approved', { args: ['held', 'held__q__pid'], code: 1, next: 'tools approve held__q__pid', nextCode: 0, box: 'held' }],
    // A server that cannot start: doctor on the same config, which exits 1 for a server that is not healthy.
    ['a server whose command does not exist', { args: ['gone', 'gone__g__pid'], code: 1, next: 'doctor', nextCode: 1, box: 'gone' }],
    ['a server whose start hangs', { args: ['hung', 'hung__h__pid'], code: 1, next: 'doctor', nextCode: 1, box: 'hung' }],
    ['a server whose config uses an unset variable', { args: ['unset', 'unset__e__pid'], code: 1, next: 'doctor', nextCode: 1, box: 'unset' }],
    ['a remote server nothing answers', { args: ['far', 'far__r__pid'], code: 1, next: 'doctor', nextCode: 1, box: 'far' }],
  ];
  for (const [what, c] of calls) {
    it(`tools call of ${what} exits ${c.code} and names a command that runs, not a tool call`, async () => {
      const config = await writeConfig(c.fx, c.box);
      if (c.state !== undefined) await writeFile(join(own.dir, 'state.json'), JSON.stringify(c.state));
      if (c.project !== undefined) await writeFile(join(own.dir, '.mcp-workbench.json'), JSON.stringify(c.project));
      const result = await run(['tools', 'call', ...c.args, '--config', config]);
      assert.equal(result.code, c.code, result.stderr);
      assert.doesNotMatch(result.stdout, MODEL_ADVICE);
      assert.doesNotMatch(result.stderr, MODEL_ADVICE);
      // A usage error is said once, on stderr; a refused call is its result, on stdout.
      if (c.code === 2) assert.equal(result.stdout, '');
      const told = c.code === 2 ? result.stderr : result.stdout;
      // The schema to fix the arguments by is shown whole: a terminal has no context budget.
      if (c.shows) assert.match(told, c.shows);
      if (c.next === undefined) return;
      const next = await runSuggested(told, c.next);
      assert.equal(next.code, c.nextCode, `${next.command}: ${next.stderr}`);
      // doctor ran on the config the call used, and checked the server that would not start.
      if (c.next === 'doctor') assert.match(next.stdout, new RegExp(`^Config: ${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$[^]*Toolbox "${c.box}"`, 'm'), next.stdout);
    });
  }
});

/** Every `mcp-workbench doctor` a text names: the words after it, up to the closing backtick. */
function doctorsNamed(text: string): string[] {
  return [...text.matchAll(/`mcp-workbench doctor([^`]*)`|mcp-workbench doctor/g)].map((m) => m[1] ?? '');
}

/** The server of each toolbox of {@link OPTIONAL} that cannot start. */
const FAILING = { gone: 'g', hung: 'h', unset: 'e', far: 'r' } as const;

describe('a server that cannot start, in the commands that start servers (README "Command line")', () => {
  const commands: [string, (box: keyof typeof FAILING) => string[]][] = [
    ['tools list', () => ['tools', 'list']],
    ['tools diff', (box) => ['tools', 'diff', `${box}/${FAILING[box]}`]],
    ['tools approve', (box) => ['tools', 'approve', `${box}__${FAILING[box]}__*`]],
    ['tools disable', (box) => ['tools', 'disable', `${box}__${FAILING[box]}__pid`]],
  ];
  for (const [name, args] of commands) {
    for (const box of Object.keys(FAILING) as (keyof typeof FAILING)[]) {
      it(`${name} with ${box}'s server names the doctor of its config, not the model's "tell the user"`, async () => {
        const config = await writeConfig({}, box);
        const result = await run([...args(box), '--config', config]);
        const said = `${result.stdout}\n${result.stderr}`;
        assert.notEqual(result.code, 0, said);
        assert.doesNotMatch(said, MODEL_ADVICE);
        // Every doctor it names runs as printed: with the config (an unset variable's fixes name none).
        for (const flags of doctorsNamed(said)) assert.ok(flags.startsWith(` --config ${config}`), `a doctor without this config in: ${said}`);
        if (box === 'unset') return;
        const next = await runSuggested(said, 'doctor');
        assert.equal(next.code, 1, `${next.command}: ${next.stderr}`);
        assert.match(next.stdout, new RegExp(`^Config: ${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$[^]*Toolbox "${box}"`, 'm'), next.stdout);
      });
    }
  }

  /**
   * doctor tells the person running it what to fix, then to run the same doctor again — never the model's "tell the
   * user", nor another doctor than the one just run.
   */
  for (const box of Object.keys(FAILING) as (keyof typeof FAILING)[]) {
    for (const extra of [[], ['--toolbox', box, '--timeout', '700']]) {
      it(`doctor ${extra.join(' ')} on ${box}'s server says what to fix and names only itself to run again`, async () => {
        const config = await writeConfig({}, box);
        const asRun = ['doctor', '--config', config, ...extra];
        const result = await run(asRun);
        assert.equal(result.code, 1, result.stderr);
        const said = `${result.stdout}\n${result.stderr}`;
        assert.doesNotMatch(said, MODEL_ADVICE);
        assert.doesNotMatch(said, /shows how|doctor` checks/);
        for (const flags of doctorsNamed(said)) assert.equal(`doctor${flags}`, asRun.join(' '), said);
        if (box === 'gone') assert.match(said, /Install it, or fix "command" of this server in the config/);
        if (box === 'hung') assert.match(said, extra.length > 0 ? /raise --timeout/ : /raise its "connectTimeoutMs" in the config/);
        if (box === 'far') assert.match(said, /Check that the server is running and its "url" in the config is right/);
        if (box !== 'unset') assert.equal(doctorsNamed(said).length, 1, said);
      });
    }
  }
});
