import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { expandConfigEnv, expandString, formatJsonPath, missingVariablesError } from '../../src/config/expand-env.js';
import type { SecretSource } from '../../src/config/secret-source.js';

function expandOne(text: string, env: Record<string, string | undefined>): string {
  const result = expandString(text, env);
  assert.deepEqual(result.missing, [], `unexpected missing variables for ${text}`);
  return result.value;
}

/** A config with one stdio server whose fields are given. */
function withServer(server: Record<string, unknown>): unknown {
  return { toolboxes: { dev: { mcpServers: { s: server } } } };
}

function serverOf(config: unknown): Record<string, unknown> {
  const { toolboxes } = config as { toolboxes: { dev: { mcpServers: { s: Record<string, unknown> } } } };
  return toolboxes.dev.mcpServers.s;
}

describe('formatJsonPath', () => {
  it('joins plain keys with dots, indices in brackets, odd keys quoted', () => {
    assert.equal(formatJsonPath([]), '(root)');
    assert.equal(formatJsonPath(['toolboxes', 'dev', 'mcpServers', 'fs', 'args', 2]), 'toolboxes.dev.mcpServers.fs.args[2]');
    assert.equal(formatJsonPath(['toolboxes', 'a_b-c1', 'mcpServers', '1']), 'toolboxes.a_b-c1.mcpServers.1');
    assert.equal(formatJsonPath(['x', 'headers', 'Content Type']), 'x.headers["Content Type"]');
    assert.equal(formatJsonPath(['env', 'A.B']), 'env["A.B"]');
  });
});

describe('expandString', () => {
  it('expands ${VAR}, keeping an empty value (set is set)', () => {
    assert.equal(expandOne('${A}/x', { A: 'a' }), 'a/x');
    assert.equal(expandOne('[${E}]', { E: '' }), '[]');
    assert.equal(expandOne('${A}${A}-${B}', { A: 'a', B: 'b' }), 'aa-b');
  });

  it('uses the default of ${VAR:-default} when unset or empty, like the shell', () => {
    assert.equal(expandOne('${U:-fallback}', {}), 'fallback');
    assert.equal(expandOne('${U:-fallback}', { U: undefined }), 'fallback');
    assert.equal(expandOne('${E:-fallback}', { E: '' }), 'fallback');
    assert.equal(expandOne('${A:-fallback}', { A: 'set' }), 'set');
    assert.equal(expandOne('${U:-}', {}), '');
    assert.equal(expandOne('${U:-a-b:-c+d}', {}), 'a-b:-c+d');
  });

  it('allows ${...} inside a default, evaluated only when the default is used', () => {
    assert.equal(expandOne('${U:-${B}/x}', { B: 'b' }), 'b/x');
    assert.equal(expandOne('${U:-${E:-${B}}}', { B: 'b', E: '' }), 'b');
    assert.deepEqual(expandString('${A:-${NOPE}}', { A: 'a' }), {
      value: 'a',
      missing: [],
      keptLiteral: false,
      substituted: [{ name: 'A', value: 'a' }],
      stored: [],
      missingSecrets: [],
    });
    // What was substituted is what output must hide: the variable's value, not a default written in the config.
    assert.deepEqual(expandString('${NOPE:-plain}-${B}', { B: 'bee' }).substituted, [{ name: 'B', value: 'bee' }]);
    assert.deepEqual(expandString('${U:-${NOPE}}', {}).missing, ['NOPE']);
  });

  it('reports every unset variable without a default, in order', () => {
    const result = expandString('${X} ${Y:-y} ${Z} ${X}', {});
    assert.deepEqual(result.missing, ['X', 'Z', 'X']);
  });

  it('keeps every other $ construct literal', () => {
    const env = { VAR: 'value', HOME: '/home/u' };
    for (const text of ['$VAR', '$HOME/x', '$(id)', '`id`', '$1', '$$', '$', 'a$', '\\$VAR', '$ {VAR}', '${}', '${1}']) {
      assert.equal(expandOne(text, env), text);
    }
    for (const text of ['${VAR-x}', '${VAR:+x}', '${VAR+x}', '${VAR:=x}', '${VAR:?x}', '${#VAR}', '${VAR', '${VAR:-{x}}']) {
      const result = expandString(text, env);
      assert.equal(result.value, text);
      assert.equal(result.keptLiteral, true, text);
    }
    assert.equal(expandOne('$VAR and ${VAR}', env), '$VAR and value');
  });

  it('keeps ${user:id} and ${user:dir} for each start to fill in, without a warning; any other ${user:…} is warned about', () => {
    const env = { user: 'not this', VAR: 'v' };
    for (const text of ['${user:dir}/memory.jsonl', '--id=${user:id}', '${VAR}-${user:id}-${user:dir}']) {
      const result = expandString(text, env);
      assert.equal(result.value, text.replace('${VAR}', 'v'));
      assert.equal(result.keptLiteral, false, text);
      assert.deepEqual(result.missing, []);
    }
    for (const text of ['${user:home}', '${user:}', '${user:dirx}']) assert.equal(expandString(text, env).keptLiteral, true, text);
  });

  it('never re-expands a substituted value or a default, and keeps replace() patterns', () => {
    const tricky = 'p$HOME ${OTHER} $(id) `id` $& $` $\' $$ \\$x \\\\$y end\\';
    assert.equal(expandOne('${SECRET}', { SECRET: tricky, HOME: '/h', OTHER: 'o' }), tricky);
    assert.equal(expandOne('<${U:-$HOME $& $$ \\$ $(id)}>', { HOME: '/h' }), '<$HOME $& $$ \\$ $(id)>');
    assert.equal(expandOne('${A}', { A: '${A}' }), '${A}');
  });

  it('resolves only own variables: names shaped like Object.prototype members are ordinary names', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assert.equal(expandOne(`\${${name}:-d}`, {}), 'd', name);
      assert.deepEqual(expandString(`\${${name}}`, {}).missing, [name]);
      assert.equal(expandOne(`\${${name}}`, { [name]: 'v' }), 'v', name);
    }
  });

  it('handles names containing "null"', () => {
    assert.equal(expandOne('${MY_null_VAR}', { MY_null_VAR: 'ok' }), 'ok');
    assert.equal(expandOne('${nullable:-d}', {}), 'd');
  });
});

describe('expandConfigEnv', () => {
  it('expands command, args, env values, cwd, url and headers, and nothing else', () => {
    const raw = {
      _note: '${A}',
      toolboxes: {
        dev: {
          description: '${A}',
          disabledTools: ['${A}'],
          mcpServers: {
            local: {
              command: '${A}/bin',
              args: ['${A}', 'x', '${U:-d}'],
              env: { '${A}': '${A}' },
              cwd: '${A}',
              toolFilters: ['${A}'],
              disabledTools: ['${A}'],
              _comment: '${A}',
            },
            web: { type: 'http', url: 'https://${A}/mcp', headers: { '${A}': 'Bearer ${A}' } },
          },
        },
      },
    };
    const { config } = expandConfigEnv(raw, { A: 'a' });
    assert.deepEqual(config, {
      _note: '${A}',
      toolboxes: {
        dev: {
          description: '${A}',
          disabledTools: ['${A}'],
          mcpServers: {
            local: {
              command: 'a/bin',
              args: ['a', 'x', 'd'],
              env: { '${A}': 'a' },
              cwd: 'a',
              toolFilters: ['${A}'],
              disabledTools: ['${A}'],
              _comment: '${A}',
            },
            web: { type: 'http', url: 'https://a/mcp', headers: { '${A}': 'Bearer a' } },
          },
        },
      },
    });
  });

  it('modifies neither the input nor the env', () => {
    const raw = withServer({ command: '${A}', args: ['${B:-b}'] });
    const before = structuredClone(raw);
    const env = Object.freeze({ A: 'a' });
    expandConfigEnv(raw, env);
    assert.deepEqual(raw, before);
    assert.deepEqual(env, { A: 'a' });
  });

  it('reports every missing variable of the whole config at once, with its path and server, without throwing', () => {
    const raw = {
      toolboxes: {
        dev: {
          mcpServers: {
            fs: { command: 'npx', args: ['-y', 'server', '${PROJECT_ROOT}'], cwd: '${WORK_DIR}' },
            memory: { command: 'npx', env: { MEMORY_FILE_PATH: '${MEMORY_DIR}/m.jsonl' } },
          },
        },
        ops: {
          mcpServers: {
            remote: { type: 'http', url: '${BASE_URL}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
            again: { command: '${PROJECT_ROOT}/bin/server' },
          },
        },
      },
    };
    const { missing } = expandConfigEnv(raw, { HOME: '/home/u' });
    assert.deepEqual(
      missing.map((m) => `${m.toolbox}/${m.server} ${m.name}`),
      ['dev/fs PROJECT_ROOT', 'dev/fs WORK_DIR', 'dev/memory MEMORY_DIR', 'ops/remote BASE_URL', 'ops/remote TOKEN', 'ops/again PROJECT_ROOT'],
    );
    const error = missingVariablesError(missing, '/cfg/workbench-config.json');
    assert.equal(error.code, 'ENV_MISSING');
    assert.deepEqual(error.details, [
      'toolboxes.dev.mcpServers.fs.args[2]: ${PROJECT_ROOT} is not set and has no default',
      'toolboxes.dev.mcpServers.fs.cwd: ${WORK_DIR} is not set and has no default',
      'toolboxes.dev.mcpServers.memory.env.MEMORY_FILE_PATH: ${MEMORY_DIR} is not set and has no default',
      'toolboxes.ops.mcpServers.remote.url: ${BASE_URL} is not set and has no default',
      'toolboxes.ops.mcpServers.remote.headers.Authorization: ${TOKEN} is not set and has no default',
      'toolboxes.ops.mcpServers.again.command: ${PROJECT_ROOT} is not set and has no default',
    ]);
    assert.match(error.message, /PROJECT_ROOT, WORK_DIR, MEMORY_DIR, BASE_URL, TOKEN/);
    assert.match(error.message, /\/cfg\/workbench-config\.json/);
    assert.match(error.message, /\$\{VAR:-default\}/);
  });

  it('never puts a value into an error: neither set variables nor defaults', () => {
    const secret = 'sk-live-0123456789abcdef';
    const raw = withServer({
      command: 'run',
      args: ['--token=${TOKEN}', '${MISSING}', '${OTHER:-default-secret-xyz}'],
      env: { KEY: '${TOKEN}' },
    });
    const expanded = expandConfigEnv(raw, { TOKEN: secret });
    const error = missingVariablesError(expanded.missing, undefined);
    const shown = `${error.toDisplayString()}\n${String(error.stack)}\n${JSON.stringify(expanded.missing)}`;
    assert.ok(!shown.includes(secret));
    assert.ok(!shown.includes('default-secret-xyz'));
    assert.match(shown, /MISSING/);
  });

  it('keeps as secrets only the values of variables whose names name a secret', () => {
    const raw = withServer({ command: '${TOOL_HOME}/bin/x', args: ['--token=${GITHUB_TOKEN}', '${WORK_DIR}'], env: { K: '${apiKey}' } });
    const { secrets } = expandConfigEnv(raw, { TOOL_HOME: '/opt/tool', GITHUB_TOKEN: 'ghp_abcdef', WORK_DIR: '/home/u/x', apiKey: 'k-123456' });
    assert.deepEqual(secrets, [
      { value: 'ghp_abcdef', label: '${GITHUB_TOKEN}' },
      { value: 'k-123456', label: '${apiKey}' },
    ]);
  });

  it('warns, by path only, about a ${ that is not a supported form', () => {
    const { config, warnings } = expandConfigEnv(withServer({ command: 'x', args: ['${TOKEN-secretish}'] }), {});
    assert.deepEqual(serverOf(config).args, ['${TOKEN-secretish}']);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /^toolboxes\.dev\.mcpServers\.s\.args\[0\]: /);
    assert.ok(!(warnings[0] ?? '').includes('secretish'));
  });

  it('passes anything not shaped like a config through unchanged', () => {
    for (const raw of [null, 3, 'x', [], {}, { toolboxes: [] }, { toolboxes: { a: 1 } }, { toolboxes: { a: { mcpServers: 'x' } } }]) {
      assert.deepEqual(expandConfigEnv(raw, {}).config, raw);
    }
    assert.deepEqual(serverOf(expandConfigEnv(withServer({ command: 1, args: [1, '${A}'], env: { X: 2 } }), { A: 'a' }).config), {
      command: 1,
      args: [1, 'a'],
      env: { X: 2 },
    });
  });
});

describe('expansion never executes anything', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'workbench-noexec-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps $(...), backticks and $(id) literal in every expanded place, values and defaults included', () => {
    const marker = (n: string): string => join(dir, `pwned-${n}`);
    const texts = [
      `$(touch ${marker('a')})`,
      `\`touch ${marker('b')}\``,
      '$(id)',
      `\${UNSET:-$(touch ${marker('c')})}`,
      `\${UNSET:-\`touch ${marker('d')}\`}`,
      `\${EVIL}`,
      `pre-\${EVIL}-post $(touch ${marker('f')})`,
    ];
    const env = { EVIL: `$(touch ${marker('e')}) \`touch ${marker('e2')}\` $(id)` };
    const raw = withServer({
      command: texts[0],
      args: texts,
      env: Object.fromEntries(texts.map((t, i) => [`V${i}`, t])),
      cwd: texts[1],
    });
    const server = serverOf(expandConfigEnv(raw, env).config);
    assert.deepEqual(server.args, [
      texts[0],
      texts[1],
      '$(id)',
      `$(touch ${marker('c')})`,
      `\`touch ${marker('d')}\``,
      env.EVIL,
      `pre-${env.EVIL}-post $(touch ${marker('f')})`,
    ]);
    assert.equal(server.command, texts[0]);
    assert.equal(server.cwd, texts[1]);
    for (const name of ['a', 'b', 'c', 'd', 'e', 'e2', 'f']) {
      assert.equal(existsSync(marker(name)), false, `${marker(name)} must not exist`);
    }
  });

  it('expands a reference inside $(...) text as text; the $(...) around it is never run', () => {
    const result = expandString('$(echo ${NOT_SET:-x}) $(echo $NOT_SET)', {});
    assert.equal(result.value, '$(echo x) $(echo $NOT_SET)');
    assert.deepEqual(expandConfigEnv(withServer({ command: '$(${NOT_SET})' }), {}).missing.map((m) => m.name), ['NOT_SET']);
  });
});

/** A secret source over a fixed map (README "Secrets"); `problem` makes it an unreadable store. */
function source(values: Record<string, string>, problem?: string): SecretSource {
  const map = new Map(Object.entries(values));
  return { where: 'the test store', get: (name) => map.get(name), ...(problem !== undefined && { problem }) };
}

describe('${secret:NAME}', () => {
  it('takes the stored value, as a lookup only, and reports every secret that is not stored', () => {
    const store = source({ github: 'ghp_stored_0123', 'a.b-c_d': '$(id) ${HOME}' });
    const result = expandString('x ${secret:github} ${secret:a.b-c_d} ${secret:nope} ${secret:nope}', { HOME: '/h' }, store);
    assert.equal(result.value, 'x ghp_stored_0123 $(id) ${HOME}  ');
    assert.deepEqual(result.stored, [
      { name: 'github', value: 'ghp_stored_0123' },
      { name: 'a.b-c_d', value: '$(id) ${HOME}' },
    ]);
    assert.deepEqual(result.missingSecrets, ['nope', 'nope']);
    assert.deepEqual(result.missing, []);
  });

  it('may stand in a default, looked up only when the default is used', () => {
    const store = source({ github: 'ghp_stored_0123' });
    assert.equal(expandString('${GITHUB_TOKEN:-${secret:github}}', {}, store).value, 'ghp_stored_0123');
    const fromEnv = expandString('${GITHUB_TOKEN:-${secret:absent}}', { GITHUB_TOKEN: 'env-value' }, store);
    assert.equal(fromEnv.value, 'env-value');
    assert.deepEqual(fromEnv.missingSecrets, []);
  });

  it('keeps other forms literal: a default of its own, an invalid name, no name', () => {
    for (const text of ['${secret:a:-x}', '${secret:1abc}', '${secret:}', '${secret:a b}', '${secret:_x}', `\${secret:${'a'.repeat(65)}}`]) {
      const result = expandString(text, {}, source({ a: 'value-a', _x: 'v', a1: 'v' }));
      assert.equal(result.value, text, text);
      assert.equal(result.keptLiteral, true, text);
    }
  });

  it('treats every reference as missing without a source or with an unreadable one', () => {
    assert.deepEqual(expandString('${secret:github}', {}).missingSecrets, ['github']);
    assert.deepEqual(expandString('${secret:github}', {}, source({ github: 'ghp_stored_0123' }, 'broken')).missingSecrets, ['github']);
  });

  it('labels every resolved value as a secret whatever it is called, and marks the env entries and headers that hold one', () => {
    const raw = {
      toolboxes: {
        dev: {
          mcpServers: {
            s: { command: 'x', args: ['--mode=${secret:plain}'], env: { MODE: 'pre-${secret:plain}', HOME_DIR: '/h' } },
            r: { type: 'http', url: 'https://h.test/mcp', headers: { 'X-Thing': '${secret:remote}', Accept: 'a' } },
            m: { command: 'x', env: { A: '${secret:absent}' } },
          },
        },
      },
    };
    const expanded = expandConfigEnv(raw, {}, source({ plain: 'value-plain', remote: 'value-remote' }));
    assert.deepEqual(expanded.secrets, [
      { value: 'value-plain', label: 'secret plain' },
      { value: 'value-plain', label: 'secret plain' },
      { value: 'value-remote', label: 'secret remote' },
    ]);
    assert.deepEqual(expanded.secretUses, [
      { name: 'plain', toolbox: 'dev', server: 's' },
      { name: 'plain', toolbox: 'dev', server: 's', entry: { key: 'env', name: 'MODE' } },
      { name: 'remote', toolbox: 'dev', server: 'r', entry: { key: 'headers', name: 'X-Thing' } },
    ]);
    assert.deepEqual(expanded.missingSecrets, [{ name: 'absent', path: 'toolboxes.dev.mcpServers.m.env.A', toolbox: 'dev', server: 'm' }]);
    assert.ok(!JSON.stringify(expanded.missingSecrets).includes('value-'));
  });
});

describe('no escape for a literal ${…} (README "Environment variables")', () => {
  it('$${VAR} and \\${VAR} still expand; a value holding ${…} is passed as is, never expanded again', () => {
    const env = { HOME: '/home/me', LITERAL_HOME: '${HOME}' };
    assert.equal(expandString('$${HOME}', env).value, '$/home/me');
    assert.equal(expandString('\\${HOME}', env).value, '\\/home/me');
    assert.equal(expandString('--template=${LITERAL_HOME}', env).value, '--template=${HOME}');
  });
});
