import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describeConfigPath, resolveConfigPath } from '../../src/config/config-path.js';
import { loadConfig, parseConfig, parseConfigJson } from '../../src/config/load.js';
import { configProblemsError, noServerCanStartError, serverProblemError } from '../../src/config/server-problems.js';
import { failure, rejection } from '../helpers/expect-error.js';
import { errorMessage } from '../../src/errors.js';
import { shellQuote } from '../../src/shared/shell-quote.js';

const fixtures = fileURLToPath(new URL('../fixtures/configs/', import.meta.url));
const fixture = (name: string): string => join(fixtures, name);

const designEnv = { PROJECT_ROOT: '/work/project', HOME: '/home/ada', REMOTE_TOKEN: 'tok-123' };

/** Validation problems of a document that should be invalid. */
function problems(raw: unknown): readonly string[] {
  return failure(() => parseConfig(raw, '/cfg/workbench-config.json', {}), 'CONFIG_INVALID').details;
}

function config(servers: Record<string, unknown>, toolbox: Record<string, unknown> = {}): unknown {
  return { toolboxes: { dev: { ...toolbox, mcpServers: servers } } };
}

describe('resolveConfigPath', () => {
  const cwd = '/home/ada/project';

  it('prefers --config, then WORKBENCH_CONFIG, then ./workbench-config.json, resolved against cwd', () => {
    assert.deepEqual(resolveConfigPath({ flag: 'a.json', env: { WORKBENCH_CONFIG: '/etc/b.json' }, cwd }), {
      path: '/home/ada/project/a.json',
      origin: 'flag',
    });
    assert.deepEqual(resolveConfigPath({ env: { WORKBENCH_CONFIG: '../b.json' }, cwd }), {
      path: '/home/ada/b.json',
      origin: 'WORKBENCH_CONFIG',
    });
    assert.deepEqual(resolveConfigPath({ env: {}, cwd }), {
      path: '/home/ada/project/workbench-config.json',
      origin: 'default',
    });
    assert.deepEqual(resolveConfigPath({ flag: '/abs/c.json', env: {}, cwd }), { path: '/abs/c.json', origin: 'flag' });
  });

  it('describes how the path was chosen', () => {
    assert.equal(describeConfigPath(resolveConfigPath({ flag: 'a.json', env: {}, cwd })), '/home/ada/project/a.json (from --config)');
    assert.equal(describeConfigPath({ path: '/x.json', origin: 'WORKBENCH_CONFIG' }), '/x.json (from WORKBENCH_CONFIG)');
    assert.equal(describeConfigPath({ path: '/x.json', origin: 'default' }), '/x.json (the default)');
  });

  it('treats empty values as not given', () => {
    assert.equal(resolveConfigPath({ flag: '', env: { WORKBENCH_CONFIG: '' }, cwd }).origin, 'default');
    assert.equal(resolveConfigPath({ flag: '', env: { WORKBENCH_CONFIG: 'x.json' }, cwd }).origin, 'WORKBENCH_CONFIG');
  });

  it('expands a leading ~/ from HOME, since MCP clients pass env without a shell', () => {
    assert.equal(resolveConfigPath({ env: { WORKBENCH_CONFIG: '~/wb.json', HOME: '/home/ada' }, cwd }).path, '/home/ada/wb.json');
    assert.equal(resolveConfigPath({ flag: '~user/x.json', env: { HOME: '/home/ada' }, cwd }).path, '/home/ada/project/~user/x.json');
  });
});

describe('loadConfig', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'workbench-config-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the README example config, expanded and normalised', async () => {
    const path = fixture('design-example.json');
    const { secrets, ...loaded } = await loadConfig(path, designEnv);
    // Everything output must hide, by meaning: the variable named as a token and the Authorization header (whole and
    // its credential). PROJECT_ROOT and HOME name nothing secret: they are shown as expanded.
    assert.deepEqual(
      secrets?.map((s) => s.label),
      ['${REMOTE_TOKEN}', 'header Authorization', 'header Authorization'],
    );
    assert.deepEqual(loaded, {
      source: path,
      warnings: [],
      toolboxes: [
        {
          name: 'dev',
          description: 'Files and memory for local work',
          disabledTools: [],
          servers: [
            {
              name: 'filesystem',
              type: 'stdio',
              command: 'npx',
              args: ['-y', '@modelcontextprotocol/server-filesystem', '/work/project'],
              env: {},
              inheritEnv: false,
              shared: false,
              disabledTools: [],
            },
            {
              name: 'memory',
              type: 'stdio',
              command: 'npx',
              args: ['-y', '@modelcontextprotocol/server-memory'],
              env: { MEMORY_FILE_PATH: '/home/ada/.mcp/memory.jsonl' },
              inheritEnv: false,
              shared: false,
              disabledTools: ['delete_*'],
            },
            {
              name: 'remote',
              type: 'http',
              url: 'https://example.test/mcp',
              headers: { Authorization: 'Bearer tok-123' },
              shared: false,
              disabledTools: [],
            },
          ],
        },
      ],
    });
  });

  it('loads the shipped workbench-config.example.json', async () => {
    const path = fileURLToPath(new URL('../../workbench-config.example.json', import.meta.url));
    const loaded = await loadConfig(path, { HOME: '/home/ada' });
    assert.deepEqual(loaded.warnings, []);
    assert.ok(loaded.toolboxes.length > 0);
  });

  it('reports a missing file with what to do', async () => {
    const path = join(dir, 'nope', 'workbench-config.json');
    const error = await rejection(loadConfig(path, {}), 'CONFIG_NOT_FOUND');
    assert.ok(error.message.includes(path));
    assert.match(error.message, /workbench-config\.example\.json/);
    assert.match(error.message, /--config/);
    assert.match(error.message, /WORKBENCH_CONFIG/);
  });

  it('reports a directory as unreadable, with the reason', async () => {
    const error = await rejection(loadConfig(dir, {}), 'CONFIG_UNREADABLE');
    assert.match(error.message, /directory/);
    assert.ok(error.message.includes(dir));
  });

  it('reports a file without read permission as unreadable', async (t) => {
    const uid = process.getuid?.();
    if (uid === undefined) {
      t.skip('needs POSIX permissions');
      return;
    }
    // root reads any file through its DAC capabilities: the load then runs in a child that is still root (so it
    // reads the repository wherever it is) but without them, which needs setpriv(1).
    const setpriv = uid === 0 ? ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) : undefined;
    if (uid === 0 && !setpriv) {
      t.skip('running as root: root reads every file, and setpriv(1) is not installed to drop that capability');
      return;
    }
    const path = join(dir, 'locked.json');
    await writeFile(path, '{"toolboxes":{}}');
    await chmod(path, 0o000);
    let code: string;
    let message: string;
    if (uid !== 0) {
      ({ code, message } = await rejection(loadConfig(path, {}), 'CONFIG_UNREADABLE'));
    } else {
      const script =
        `import { loadConfig } from ${JSON.stringify(new URL('../../src/config/load.ts', import.meta.url).href)};` +
        `try { await loadConfig(${JSON.stringify(path)}, {}); } catch (e) {` +
        ` process.stdout.write(JSON.stringify({ code: e.code, message: e.message })); }`;
      const child = spawnSync(
        setpriv!,
        ['--inh-caps=-all', '--bounding-set=-dac_override,-dac_read_search', '--', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
        { encoding: 'utf8', cwd: fileURLToPath(new URL('../..', import.meta.url)) },
      );
      assert.equal(child.status, 0, child.stderr);
      ({ code, message } = JSON.parse(child.stdout) as { code: string; message: string });
    }
    assert.equal(code, 'CONFIG_UNREADABLE');
    assert.ok(message.includes(path));
  });

  it('reports invalid JSON with line and column; the offending line is for the terminal only, never in what a client is shown', async () => {
    const error = await rejection(loadConfig(fixture('syntax-error.json'), {}), 'CONFIG_PARSE');
    assert.match(error.message, /^The config .*syntax-error\.json is not valid JSON at line 5, column 38: Expected ',' or '}' after property value; fix it there\.$/);
    assert.doesNotMatch(error.toDisplayString(), /"command"/, 'a client is never shown a line of the file (it may hold a secret)');
    const lines = errorMessage(error).split('\n');
    assert.equal(lines[1], '  5 |         "memory": { "command": "npx" "args": [] }');
    assert.equal(lines[2], '    |                                      ^');
  });

  it('reads JSONC: comments and trailing commas are fine, a __proto__ key stays data, a key written twice is reported', () => {
    const text = [
      '// copied from my client config',
      '{',
      '  /* the toolboxes */',
      '  "toolboxes": {',
      '    "dev": { "mcpServers": { "s": { "command": "node", "args": ["x",], }, }, },',
      '  },',
      '  "__proto__": { "polluted": true },',
      '}',
    ].join('\n');
    const value = parseConfigJson(text, 'c.json') as Record<string, unknown>;
    assert.deepEqual(Object.keys(value), ['toolboxes', '__proto__']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual((value.toolboxes as Record<string, { mcpServers: Record<string, { args: string[] }> }>).dev!.mcpServers.s!.args, ['x']);
  });

  it('finds line and column for every kind of JSON error, with hints', () => {
    const cases: [string, RegExp][] = [
      ['{\n  "toolboxes": {},\n  /* note\n}', /line 3, column 3/],
      ['{\n  "toolboxes": {\n    "a": 1,,\n  }\n}', /line 3, column 12/],
      ['{\r\n  "toolboxes": x\r\n}', /at line 2, column 16: Unexpected character;/],
      ["{'toolboxes': {}}", /line 1, column 2: .* \(JSON strings use double quotes\)/],
      ['{"toolboxes": {', /at line 1, column 16: .* \(the file ends early/],
      ['{"toolboxes": {"a": "b', /at line 1, column 21: Unterminated string/],
      ['{"toolboxes": "a\tb"}', /at line 1, column 17: Bad control character in string literal/],
      ['{"toolboxes": {}} x', /line 1, column 19/],
    ];
    for (const [text, expected] of cases) {
      const error = failure(() => parseConfigJson(text, 'c.json'), 'CONFIG_PARSE');
      assert.match(error.message, expected, text);
      assert.doesNotMatch(error.message, /"[^"]*" is not valid JSON/, 'V8 snippets of the text are left out');
      assert.doesNotMatch(error.message, /'x'|Unexpected token/, 'not even the character at fault is quoted (it is in the terminal excerpt)');
      assert.match(errorMessage(error), /\n +\d+ \| .*\n +\| +\^$/);
    }
    assert.match(failure(() => parseConfigJson(' \n', 'c.json'), 'CONFIG_PARSE').message, /the file is empty/);
    // Saved as UTF-16 ("Unicode" in some editors), read as UTF-8: said so, without echoing the bytes.
    const utf16 = Buffer.from('\uFEFF{ "toolboxes": {} }', 'utf16le').toString('utf8');
    const message = failure(() => parseConfigJson(utf16, 'c.json'), 'CONFIG_PARSE').message;
    assert.match(message, /c\.json: it is not UTF-8 text \(it looks like UTF-16 or a binary file\)\. Save it as UTF-8/);
    assert.doesNotMatch(message, /\uFFFD/);
  });

  it('accepts a UTF-8 byte-order mark', async () => {
    const path = join(dir, 'bom.json');
    await writeFile(path, `\uFEFF${await readFile(fixture('proxy-mode.json'), 'utf8')}`);
    assert.equal((await loadConfig(path, {})).toolboxes.length, 1);
  });

  it('rejects toolMode "dynamic", explaining the removal and the way out', async () => {
    const path = fixture('dynamic-mode.json');
    const error = await rejection(loadConfig(path, {}), 'CONFIG_DYNAMIC_MODE');
    assert.match(error.message, /removed in 0\.10\.0/);
    assert.match(error.message, /proxy-only/);
    assert.match(error.message, /open_toolbox and use_tool/);
    assert.ok(error.message.includes(`mcp-workbench migrate --config ${shellQuote(path)} --write`), error.message);
    assert.match(error.message, /MIGRATION\.md/);
  });

  it('rejects toolMode "dynamic" before anything else is checked', () => {
    const error = failure(() => parseConfig({ toolMode: 'dynamic', toolboxes: 3 }, '/my configs/wb.json', {}), 'CONFIG_DYNAMIC_MODE');
    assert.ok(error.message.includes(`--config '/my configs/wb.json' --write`));
  });

  it('loads toolMode "proxy" with a deprecation warning', async () => {
    const loaded = await loadConfig(fixture('proxy-mode.json'), {});
    assert.equal(loaded.toolboxes.length, 1);
    assert.equal(loaded.warnings.length, 1);
    assert.match(loaded.warnings[0] ?? '', /"toolMode": "proxy" .* deprecated/);
  });

  it('reads a config through a nested directory path it was given', async () => {
    const nested = join(dir, 'a', 'b');
    await mkdir(nested, { recursive: true });
    const path = join(nested, 'workbench-config.json');
    await writeFile(path, JSON.stringify(config({ s: { command: 'x' } })));
    assert.equal((await loadConfig(path, {})).source, path);
  });
});

describe('workbench-config.schema.json', () => {
  it('compiles without ajv strict-mode warnings and accepts the README example config as written', async () => {
    const schemaText = await readFile(new URL('../../workbench-config.schema.json', import.meta.url), 'utf8');
    const warnings: unknown[] = [];
    const logger = { log: () => {}, warn: (...args: unknown[]) => warnings.push(args), error: (...args: unknown[]) => warnings.push(args) };
    const validate = new Ajv({ allErrors: true, logger }).compile(JSON.parse(schemaText));
    assert.deepEqual(warnings, []);
    const example: unknown = JSON.parse(await readFile(fixture('design-example.json'), 'utf8'));
    assert.equal(validate(example), true, JSON.stringify(validate.errors));
  });

  it('refuses in an editor what validate refuses: toolMode "dynamic", a url that is not http(s) (one made from ${VAR} is fine)', async () => {
    const validate = new Ajv({ allErrors: true }).compile(JSON.parse(await readFile(new URL('../../workbench-config.schema.json', import.meta.url), 'utf8')));
    const remote = (url: string) => ({ toolboxes: { dev: { mcpServers: { web: { type: 'http', url } } } } });
    assert.equal(validate({ toolMode: 'dynamic', toolboxes: {} }), false);
    assert.equal(validate({ toolMode: 'proxy', toolboxes: {} }), true);
    for (const url of ['ftp://example.com/mcp', 'example.com/mcp', 'localhost:3000/mcp']) assert.equal(validate(remote(url)), false, url);
    for (const url of ['https://example.com/mcp', 'HTTP://127.0.0.1:3000/mcp', '${DOCS_URL}', '${DOCS_BASE}/mcp']) assert.equal(validate(remote(url)), true, url);
    // the loader leaves that rule to the server alone: the config loads, the one server carries the problem
    const loaded = parseConfig({ toolboxes: { dev: { mcpServers: { web: { type: 'http', url: 'ftp://example.com/mcp' }, local: { command: 'x' } } } } }, 'mem', {});
    assert.equal(loaded.toolboxes[0]!.servers.find((s) => s.name === 'web')!.problems?.[0]?.kind, 'invalid-url');
    assert.equal(loaded.toolboxes[0]!.servers.find((s) => s.name === 'local')!.problems, undefined);
  });

  it('documents every property for editors', async () => {
    const schemaText = await readFile(new URL('../../workbench-config.schema.json', import.meta.url), 'utf8');
    const schema = JSON.parse(schemaText) as {
      properties: Record<string, { description?: string }>;
      definitions: Record<string, { properties?: Record<string, { description?: string }> }>;
    };
    const levels = [schema.properties, schema.definitions.toolbox?.properties, schema.definitions.server?.properties];
    for (const properties of levels) {
      assert.ok(properties);
      for (const [key, property] of Object.entries(properties)) {
        assert.ok(property.description, `${key} has a description`);
      }
    }
  });
});

describe('catalogBudget', () => {
  it('loads a top-level and a per-toolbox budget', () => {
    const loaded = parseConfig({ catalogBudget: 30000, toolboxes: { dev: { catalogBudget: 5000, mcpServers: { s: { command: 'x' } } }, ops: { mcpServers: { s: { command: 'x' } } } } }, 'mem', {});
    assert.equal(loaded.catalogBudget, 30000);
    assert.equal(loaded.toolboxes[0]!.catalogBudget, 5000);
    assert.equal(loaded.toolboxes[1]!.catalogBudget, undefined);
  });

  it('rejects budgets that are not whole numbers of at least 1,000 characters, with their JSON path', () => {
    const found = problems({ catalogBudget: 10, toolboxes: { dev: { catalogBudget: 'big', mcpServers: { s: { command: 'x' } } } } }).join('\n');
    assert.match(found, /catalogBudget/);
    assert.match(found, /toolboxes\.dev\.catalogBudget|toolboxes\/dev\/catalogBudget/);
  });
});

describe('${secret:NAME} in a config (README "Secrets")', () => {
  const store = (values: Record<string, string>) => ({ where: 'the secret file /s/secrets.json', get: (name: string) => values[name] });
  const raw = {
    toolboxes: {
      dev: {
        mcpServers: {
          ok: { command: 'x', env: { MODE: '${secret:known}' } },
          broken: { command: 'x', args: ['--key=${secret:unknown}'] },
        },
      },
    },
  };

  it('fails only the server that uses an unknown secret, naming it and the secret set command; never a value', () => {
    const config = parseConfig(raw, 'mem', {}, { secrets: store({ known: 'stored-value-1' }) });
    const [ok, broken] = config.toolboxes[0]!.servers;
    assert.equal(ok!.problems, undefined);
    assert.deepEqual(ok!.type === 'stdio' && ok!.env, { MODE: 'stored-value-1' });
    assert.deepEqual(ok!.secretEntries, ['MODE']);
    assert.deepEqual(broken!.problems, [
      {
        kind: 'secret-missing',
        path: 'toolboxes.dev.mcpServers.broken.args[0]',
        secrets: ['unknown'],
        message: '${secret:unknown} is not in the secret file /s/secrets.json',
        fix: 'store it with `mcp-workbench secret set unknown` (the value is read from stdin or a prompt), then restart the workbench or save the config to reload it',
      },
    ]);
    assert.ok(config.secrets?.some((s) => s.value === 'stored-value-1' && s.label === 'secret known'));
    const error = serverProblemError('server "broken"', broken!.problems!);
    assert.equal(error.code, 'SECRET_MISSING');
    // The fix is the error's hint (a field of its own in a tool result's _meta), and part of what is shown.
    assert.match(error.hint ?? '', /^To fix: store it with `mcp-workbench secret set unknown`/);
    assert.match(error.toDisplayString(), /mcp-workbench secret set unknown/);
    assert.equal(noServerCanStartError(config), undefined, 'one server can start');
    const all = configProblemsError(config)!;
    assert.equal(all.code, 'SECRET_MISSING');
    assert.ok(!all.toDisplayString().includes('stored-value-1'));
  });

  it('says the store cannot be read when it cannot, and that none was given without one', () => {
    const unreadable = parseConfig(raw, 'mem', {}, { secrets: { where: 'the secret file /s/secrets.json', get: () => undefined, problem: 'it is not valid JSON' } });
    assert.match(unreadable.toolboxes[0]!.servers[0]!.problems![0]!.message, /cannot be read \(it is not valid JSON\)/);
    const without = parseConfig(raw, 'mem', {});
    assert.match(without.toolboxes[0]!.servers[1]!.problems![0]!.message, /no secret store was given/);
    assert.ok(noServerCanStartError(without), 'no server can start');
  });

  it('opens the store only for a config that refers to it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wb-secret-load-'));
    try {
      let opened = 0;
      const secrets = async () => {
        opened++;
        return store({ known: 'stored-value-1', unknown: 'stored-value-2' });
      };
      const plain = join(dir, 'plain.json');
      await writeFile(plain, JSON.stringify({ toolboxes: { dev: { mcpServers: { s: { command: 'x' } } } } }));
      await loadConfig(plain, {}, { secrets });
      assert.equal(opened, 0);
      const using = join(dir, 'using.json');
      await writeFile(using, JSON.stringify(raw));
      const loaded = await loadConfig(using, {}, { secrets });
      assert.equal(opened, 1);
      assert.ok(loaded.toolboxes[0]!.servers.every((s) => !s.problems));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
