import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig, parseConfig } from '../../src/config/load.js';
import { configProblemsError, noServerCanStartError, serverProblemError } from '../../src/config/server-problems.js';
import { failure, rejection } from '../helpers/expect-error.js';

/** What a config with problems gets told: every problem at once, where it is, what to write instead (README "Configuration"). */

const fixtures = fileURLToPath(new URL('../fixtures/configs/', import.meta.url));
const fixture = (name: string): string => join(fixtures, name);

/** Validation problems of a document that should be invalid. */
function problems(raw: unknown): readonly string[] {
  return failure(() => parseConfig(raw, '/cfg/workbench-config.json', {}), 'CONFIG_INVALID').details;
}

function config(servers: Record<string, unknown>, toolbox: Record<string, unknown> = {}): unknown {
  return { toolboxes: { dev: { ...toolbox, mcpServers: servers } } };
}

describe('config problems', () => {
  it('reports every schema violation at once, with paths, in document order', async () => {
    const error = await rejection(loadConfig(fixture('many-problems.json'), {}), 'CONFIG_INVALID');
    assert.match(error.message, /many-problems\.json is not a valid workbench config \(7 problems\)/);
    assert.deepEqual(error.details, [
      'toolboxes.dev: unknown key "descripton"; did you mean "description"?',
      'toolboxes.dev.mcpServers.fs: unknown key "comand"; did you mean "command"?',
      'toolboxes.dev.mcpServers.fs.args[1]: must be a string; write it in quotes: "42"',
      'toolboxes.dev.mcpServers.fs: a server needs either "command" (stdio) or "url" with type "http"/"sse"',
      'toolboxes.dev.mcpServers.web: type "http" needs "url"',
      'toolboxes.dev.mcpServers.slow.timeoutMs: must be a positive integer (milliseconds)',
      'toolboxes.a__b: invalid toolbox name "a__b": it contains "__" (names use letters, digits, "-" and single "_"; ' +
        'they never contain "__" and never start or end with "_")',
    ]);
  });

  it('other clients\' server keys are explained, not taken for a near spelling ("disabled" is not "disabledTools")', () => {
    const details = problems(config({ off: { command: 'node', disabled: true }, cline: { command: 'node', autoApprove: ['read'], alwaysAllow: ['x'] } }));
    const off = details.find((d) => d.startsWith('toolboxes.dev.mcpServers.off:'));
    assert.ok(off, details.join('\n'));
    assert.doesNotMatch(off, /did you mean/);
    assert.match(off, /unknown key "disabled": "disabled" turns a whole server off in other clients' configs; the workbench has no such switch: remove the server/);
    assert.ok(details.some((d) => /mcpServers\.cline: unknown key "autoApprove": .*your MCP client approves each use_tool call/.test(d)), details.join('\n'));
    // a real typo still gets its suggestion
    assert.ok(problems(config({ t: { command: 'node', disabledTool: ['x'] } })).includes('toolboxes.dev.mcpServers.t: unknown key "disabledTool"; did you mean "disabledTools"?'));
  });

  it('does not dump both stdio/remote branches: one message per server shape', () => {
    const details = problems(
      config({
        none: {},
        both: { command: 'node', url: 'https://x.test' },
        urlOnly: { url: 'https://x.test' },
        httpWithCommand: { type: 'http', command: 'node' },
        sseWithArgs: { type: 'sse', url: 'https://x.test', args: [], env: {} },
        stdioWithHeaders: { command: 'node', headers: {} },
        stdioTypeWithUrl: { type: 'stdio', url: 'https://x.test' },
      }),
    );
    assert.deepEqual(details, [
      'toolboxes.dev.mcpServers.none: a server needs either "command" (stdio) or "url" with type "http"/"sse"',
      'toolboxes.dev.mcpServers.both: a server has either "command" (stdio) or "url" with type "http"/"sse", not both',
      'toolboxes.dev.mcpServers.urlOnly: a server with "url" needs "type": "http" or "sse"',
      'toolboxes.dev.mcpServers.httpWithCommand: type "http" needs "url" ("command" is for stdio servers)',
      'toolboxes.dev.mcpServers.sseWithArgs: "args", "env" apply only to stdio servers, not to type "sse"',
      'toolboxes.dev.mcpServers.stdioWithHeaders: "headers" applies only to http/sse servers, not to stdio servers',
      'toolboxes.dev.mcpServers.stdioTypeWithUrl: type "stdio" needs "command"; a server with "url" needs type "http" or "sse"',
    ]);
    for (const line of details) assert.doesNotMatch(line, /oneOf|anyOf|must match|boolean schema|constant/);
  });

  it('suggests the closest allowed key, or lists the allowed keys, at every level', () => {
    const details = problems({
      toolbox: {},
      toolboxes: {
        dev: {
          Description: 'x',
          mcp_servers: {},
          mcpServers: {
            s: { command: 'x', Args: [], timeout: 5, disabled_tools: [], environment: {}, restartPolicy: 'always' },
          },
        },
      },
    });
    assert.deepEqual(details, [
      '(root): unknown key "toolbox"; did you mean "toolboxes"?',
      'toolboxes.dev: unknown key "Description"; did you mean "description"?',
      'toolboxes.dev: unknown key "mcp_servers"; did you mean "mcpServers"?',
      'toolboxes.dev.mcpServers.s: unknown key "Args"; did you mean "args"?',
      'toolboxes.dev.mcpServers.s: unknown key "timeout"; did you mean "timeoutMs"?',
      'toolboxes.dev.mcpServers.s: unknown key "disabled_tools"; did you mean "disabledTools"?',
      'toolboxes.dev.mcpServers.s: unknown key "environment"; did you mean "env"?',
      'toolboxes.dev.mcpServers.s: unknown key "restartPolicy" (allowed in a server: type, transport, command, args, ' +
        'env, cwd, inheritEnv, url, headers, auth, toolFilters, disabledTools, disabledPrompts, toolOverrides, timeoutMs, connectTimeoutMs, toolChanges, quarantine, catalogCache, shared; keys starting ' +
        'with "_" or "$" are comments)',
    ]);
  });

  it('says where a key belongs when it is used at the wrong level (a pasted mcpServers block)', () => {
    const details = problems({ toolboxes: { dev: { mcpServers: {}, command: 'npx' } }, mcpServers: {} });
    assert.deepEqual(details, [
      'toolboxes.dev: unknown key "command" in a toolbox; "command" belongs in a server, inside a toolbox\'s "mcpServers"',
      '(root): unknown key "mcpServers" at the top level; "mcpServers" belongs in a toolbox ("toolboxes": { "<name>": { ... } })',
    ]);
    assert.deepEqual(problems({ toolboxes: { dev: { mcpServers: { s: { command: 'x', mcpServers: {} } } } } }), [
      'toolboxes.dev.mcpServers.s: unknown key "mcpServers" in a server; "mcpServers" belongs in a toolbox ("toolboxes": { "<name>": { ... } })',
    ]);
  });

  it('ignores keys starting with "$" or "_" at the top, toolbox and server levels; accepts transport as an alias', async () => {
    const loaded = await loadConfig(fixture('comments-and-aliases.json'), {});
    assert.deepEqual(loaded.warnings, []);
    const [toolbox] = loaded.toolboxes;
    assert.equal(toolbox?.name, 'a_b-c1');
    assert.equal(toolbox?.description, '');
    assert.deepEqual(
      toolbox?.servers.map((s) => [s.name, s.type]),
      [
        ['legacy-sse', 'sse'],
        ['same', 'http'],
        ['local', 'stdio'],
      ],
    );
    assert.ok(toolbox?.servers.every((s) => !Object.keys(s).some((k) => k.startsWith('_') || k.startsWith('$'))));
  });

  it('rejects type and transport that disagree', () => {
    assert.deepEqual(problems(config({ s: { type: 'http', transport: 'sse', url: 'https://x.test' } })), [
      'toolboxes.dev.mcpServers.s: "type" is "http" but "transport" is "sse"; "transport" is an alias of "type", keep only one',
    ]);
    assert.deepEqual(problems(config({ s: { type: 'stdio', transport: 'http', command: 'node' } })), [
      'toolboxes.dev.mcpServers.s: "type" is "stdio" but "transport" is "http"; "transport" is an alias of "type", keep only one',
    ]);
    assert.deepEqual(problems(config({ s: { transport: 'websocket', url: 'wss://x.test' } })), [
      'toolboxes.dev.mcpServers.s.transport: must be one of "stdio", "http", "sse" (got "websocket")',
    ]);
  });

  it('enforces the name rules on toolboxes and servers, naming the name and the rule', () => {
    const details = problems({
      toolboxes: {
        a__b: { mcpServers: { ok: { command: 'x' } } },
        _x: { mcpServers: {} },
        x_: { mcpServers: {} },
        'a_b-c1': { mcpServers: { 'a_b-c1': { command: 'x' }, 'srv.1': { command: 'x' }, _note: { command: 'x' } } },
        Ok9: { mcpServers: { '9': { command: 'x' } } },
      },
    });
    assert.deepEqual(details, [
      'toolboxes.a__b: invalid toolbox name "a__b": it contains "__" (names use letters, digits, "-" and single "_"; ' +
        'they never contain "__" and never start or end with "_")',
      'toolboxes._x: invalid toolbox name "_x": it starts with "_" (names use letters, digits, "-" and single "_"; ' +
        'they never contain "__" and never start or end with "_"); "_"/"$" comment keys are not allowed here because ' +
        'every key is a toolbox name',
      'toolboxes.x_: invalid toolbox name "x_": it ends with "_" (names use letters, digits, "-" and single "_"; ' +
        'they never contain "__" and never start or end with "_")',
      'toolboxes.a_b-c1.mcpServers["srv.1"]: invalid server name "srv.1": it contains "." (names use letters, digits, ' +
        '"-" and single "_"; they never contain "__" and never start or end with "_")',
      'toolboxes.a_b-c1.mcpServers._note: invalid server name "_note": it starts with "_" (names use letters, digits, ' +
        '"-" and single "_"; they never contain "__" and never start or end with "_"); "_"/"$" comment keys are not ' +
        'allowed here because every key is a server name',
    ]);
  });

  it('reports types, enums, empty strings and timeouts readably', () => {
    const details = problems({
      toolMode: 'static',
      toolboxes: {
        dev: {
          description: 7,
          disabledTools: 'delete_*',
          mcpServers: {
            s: {
              command: '',
              args: '-y',
              env: { PORT: 3000, DEBUG: true },
              inheritEnv: 'yes',
              toolFilters: [''],
              timeoutMs: 1.5,
              connectTimeoutMs: -1,
            },
            r: { type: 'http', url: 'https://x.test', headers: { 'X-Retry': 3 } },
          },
        },
        broken: 'not an object',
      },
    });
    assert.deepEqual(details, [
      'toolMode: unknown value "static"; the workbench is proxy-only since 0.10.0, so remove "toolMode"',
      'toolboxes.dev.description: must be a string; write it in quotes: "7"',
      'toolboxes.dev.disabledTools: must be an array of strings',
      'toolboxes.dev.mcpServers.s.command: must not be empty',
      'toolboxes.dev.mcpServers.s.args: must be an array of strings',
      'toolboxes.dev.mcpServers.s.env.PORT: must be a string; write it in quotes: "3000"',
      'toolboxes.dev.mcpServers.s.env.DEBUG: must be a string; write it in quotes: "true"',
      'toolboxes.dev.mcpServers.s.inheritEnv: must be true or false',
      'toolboxes.dev.mcpServers.s.toolFilters[0]: must not be empty',
      'toolboxes.dev.mcpServers.s.timeoutMs: must be a positive integer (milliseconds)',
      'toolboxes.dev.mcpServers.s.connectTimeoutMs: must be a positive integer (milliseconds)',
      'toolboxes.dev.mcpServers.r.headers.X-Retry: must be a string; write it in quotes: "3"',
      'toolboxes.broken: must be an object (a toolbox definition)',
    ]);
  });

  it('reports a document that is not an object, or has no toolboxes', () => {
    assert.deepEqual(problems([]), ['(root): must be a JSON object with "toolboxes", e.g. {"toolboxes": {"dev": {"mcpServers": {"s": {"command": "…"}}}}} (README "Configuration")']);
    assert.deepEqual(problems({}), ['(root): missing required key "toolboxes"']);
    assert.deepEqual(problems({ toolboxes: { dev: {} } }), ['toolboxes.dev: missing required key "mcpServers"']);
  });

  it('fails only the servers that use an unset variable, each with its problems; validate lists them all at once', async () => {
    const loaded = await loadConfig(fixture('design-example.json'), { HOME: '/home/ada' });
    const [filesystem, memory, remote] = loaded.toolboxes[0]!.servers;
    assert.equal(memory?.problems, undefined, 'the server whose variables are set is fine');
    assert.deepEqual(filesystem?.problems, [
      {
        kind: 'env-missing',
        path: 'toolboxes.dev.mcpServers.filesystem.args[2]',
        variables: ['PROJECT_ROOT'],
        message: '${PROJECT_ROOT} is not set and has no default',
        fix: 'set PROJECT_ROOT in the environment the workbench starts with (e.g. the "env" of its entry in your MCP client\'s config) and restart it, or give a default in the config: ${PROJECT_ROOT:-value}',
      },
    ]);
    assert.deepEqual(remote?.problems?.map((p) => [p.kind, p.path, p.variables]), [['env-missing', 'toolboxes.dev.mcpServers.remote.headers.Authorization', ['REMOTE_TOKEN']]]);
    const error = configProblemsError(loaded);
    assert.equal(error?.code, 'ENV_MISSING');
    assert.deepEqual(error?.details, [
      'toolboxes.dev.mcpServers.filesystem.args[2]: ${PROJECT_ROOT} is not set and has no default',
      'toolboxes.dev.mcpServers.remote.headers.Authorization: ${REMOTE_TOKEN} is not set and has no default',
    ]);
    assert.match(error?.message ?? '', /PROJECT_ROOT, REMOTE_TOKEN/);
    assert.match(error?.message ?? '', /\$\{VAR:-default\}/);
    assert.equal(noServerCanStartError(loaded), undefined, 'one server can start');
  });

  it('refuses a url with user info beside an Authorization header of the entry (only one can be sent), naming the server', () => {
    const loaded = parseConfig(
      config({
        both: { type: 'http', url: 'https://${U}:${P}@x.test/mcp', headers: { authorization: 'Bearer ${T}' } },
        userOnly: { type: 'http', url: 'https://${U}:${P}@x.test/mcp' },
      }),
      '/cfg/workbench-config.json',
      { U: 'svc', P: 'pw', T: 'tok' },
    );
    const [both, userOnly] = loaded.toolboxes[0]!.servers;
    assert.equal(userOnly!.problems, undefined);
    assert.equal(both!.problems?.[0]?.kind, 'credentials-twice');
    const error = configProblemsError(loaded);
    assert.equal(error?.code, 'CONFIG_INVALID');
    assert.match(error!.details[0]!, /^toolboxes\.dev\.mcpServers\.both\.url: has user info .* Authorization header .*; to fix: remove the user info from "url"/);
    assert.ok(!JSON.stringify(error!.details).includes('pw'));
  });

  it('refuses to start only when no server could ever start, naming every problem at once', () => {
    const loaded = parseConfig(
      config({ a: { command: 'x', args: ['${UNSET_A}'] }, b: { type: 'http', url: '${UNSET_B}/mcp' }, c: { type: 'sse', url: 'not a url' } }),
      'mem',
      {},
    );
    const error = noServerCanStartError(loaded);
    assert.equal(error?.code, 'CONFIG_INVALID');
    assert.match(error?.message ?? '', /^No server of mem can start/);
    assert.deepEqual(error?.details.map((d) => d.split(';')[0]), [
      'toolboxes.dev.mcpServers.a.args[0]: ${UNSET_A} is not set and has no default',
      'toolboxes.dev.mcpServers.b.url: ${UNSET_B} is not set and has no default',
      'toolboxes.dev.mcpServers.c.url: must be an absolute http:// or https:// URL (checked after expanding environment variables)',
    ]);
    const onlyVariables = parseConfig(config({ a: { command: '${UNSET_A}' }, b: { command: 'x', env: { K: '${UNSET_B}' } } }), 'mem', {});
    const named = noServerCanStartError(onlyVariables);
    assert.equal(named?.code, 'ENV_MISSING');
    assert.match(named?.message ?? '', /UNSET_A, UNSET_B/);
    assert.equal(noServerCanStartError(parseConfig(config({}), 'mem', {})), undefined, 'a toolbox without servers still starts');
  });

  it('uses defaults and empty values as the contract says', () => {
    const loaded = parseConfig(
      config({ s: { command: '${NODE:-node}', args: ['${EMPTY}', '${EMPTY:-fallback}'], cwd: '${DIR:-/tmp}' } }),
      'mem',
      { EMPTY: '' },
    );
    assert.deepEqual(loaded.toolboxes[0]?.servers[0], {
      name: 's',
      type: 'stdio',
      command: 'node',
      args: ['', 'fallback'],
      env: {},
      cwd: '/tmp',
      inheritEnv: false,
      shared: false,
      disabledTools: [],
    });
  });

  it('never shows an expanded value in a problem or its error', () => {
    const secret = 'ghp_SuperSecretValue123';
    const env = { TOKEN: secret, BAD_URL: `not a url ${secret}`, EMPTY: '' };
    const loaded = parseConfig(
      config({
        s: { command: 'x', args: ['${TOKEN}', '${NOPE}'], env: { T: '${TOKEN}' } },
        r: { type: 'http', url: '${BAD_URL}', headers: { A: '${TOKEN}' } },
        e: { command: '${EMPTY}', env: { T: '${TOKEN}' } },
      }),
      'mem',
      env,
    );
    const [s, r, e] = loaded.toolboxes[0]!.servers;
    assert.deepEqual(s?.problems?.map((p) => p.kind), ['env-missing']);
    assert.deepEqual(r?.problems?.map((p) => `${p.path}: ${p.message}`), [
      'toolboxes.dev.mcpServers.r.url: must be an absolute http:// or https:// URL (checked after expanding environment variables)',
    ]);
    assert.deepEqual(e?.problems?.map((p) => `${p.path}: ${p.message}`), ['toolboxes.dev.mcpServers.e.command: is empty after expanding environment variables']);
    const shown = [
      JSON.stringify(loaded.toolboxes[0]!.servers.map((server) => server.problems)),
      configProblemsError(loaded)!.toDisplayString(),
      ...loaded.toolboxes[0]!.servers.map((server) => serverProblemError(`server "${server.name}"`, server.problems!).toDisplayString()),
    ];
    for (const text of shown) assert.ok(!text.includes(secret), text);
  });

  it('keeps toolbox and server order, applies every default, and does not modify its input', () => {
    const raw = {
      toolboxes: {
        zeta: { mcpServers: { b: { url: 'https://b.test/sse', type: 'sse' }, a: { command: 'a', inheritEnv: true } } },
        alpha: {
          description: 'second',
          disabledTools: ['x_*'],
          mcpServers: { only: { command: 'o', toolFilters: ['read_*'], timeoutMs: 5000, connectTimeoutMs: 20000 } },
        },
        empty: { mcpServers: {} },
      },
    };
    const before = structuredClone(raw);
    const loaded = parseConfig(raw, 'mem', {});
    assert.deepEqual(raw, before);
    assert.deepEqual(
      loaded.toolboxes.map((t) => [t.name, t.servers.map((s) => s.name)]),
      [
        ['zeta', ['b', 'a']],
        ['alpha', ['only']],
        ['empty', []],
      ],
    );
    assert.deepEqual(loaded.toolboxes[0]?.servers[0], { name: 'b', type: 'sse', url: 'https://b.test/sse', headers: {}, shared: false, disabledTools: [] });
    const second = loaded.toolboxes[0]?.servers[1];
    assert.equal(second?.type === 'stdio' && second.inheritEnv, true);
    assert.deepEqual(loaded.toolboxes[1], {
      name: 'alpha',
      description: 'second',
      disabledTools: ['x_*'],
      servers: [
        {
          name: 'only',
          type: 'stdio',
          command: 'o',
          args: [],
          env: {},
          inheritEnv: false,
          shared: false,
          disabledTools: [],
          toolFilters: ['read_*'],
          timeoutMs: 5000,
          connectTimeoutMs: 20000,
        },
      ],
    });
    assert.deepEqual(loaded.warnings, ['Toolbox "empty" has no servers.']);
  });

  it('warns about a config with no toolboxes', () => {
    assert.match(parseConfig({ toolboxes: {} }, 'mem', {}).warnings.join('\n'), /no toolboxes/);
  });

  it('passes on expansion warnings for an unsupported ${ form', () => {
    const loaded = parseConfig(config({ s: { command: 'x', args: ['${A-b}'] } }), 'mem', {});
    const server = loaded.toolboxes[0]?.servers[0];
    assert.equal(server?.type, 'stdio');
    assert.deepEqual(server.args, ['${A-b}']);
    assert.equal(loaded.warnings.length, 1);
    assert.match(loaded.warnings[0] ?? '', /^toolboxes\.dev\.mcpServers\.s\.args\[0\]: /);
  });
});
