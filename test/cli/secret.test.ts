import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import type { DoctorReport } from '../../src/doctor/types.js';
import { TRANSPORTS, startOver } from '../helpers/both-transports.js';
import { type CliRun, runCliAsync } from '../helpers/cli-run.js';
import { errorLine } from '../helpers/log-lines.js';
import { fixtureServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

/**
 * README "Secrets" (the secret store): `secret set | list | remove` through the built CLI with the file store, and
 * `${secret:NAME}` in a served config — the value reaches the server, an unknown secret fails only its server with
 * the fix named, and no value shows in any output, log or cache file. Every run has its own HOME, secret file and
 * cache directory: never the real home, never the OS keychain.
 */

/** POSIX modes exist (Windows has none to check). */
const posix = process.platform !== 'win32';

const VALUE = 'tok-Secret-Value-9f2c41e7';
const OTHER_VALUE = 'tok-Other-Value-3b81d0a2';

/** The environment every run gets: its own HOME, secret file and cache, and the file store forced. */
function isolated(dir: string): Record<string, string> {
  return {
    HOME: dir,
    MCP_WORKBENCH_SECRETS_FILE: join(dir, 'store', 'secrets.json'),
    MCP_WORKBENCH_SECRET_STORE: 'file',
    MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache'),
    WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'),
  };
}

/** Runs the built CLI with `input` piped on stdin (not a terminal), from `cwd`. */
function runWithStdin(args: string[], input: string, env: Record<string, string>, cwd: string): Promise<CliRun> {
  // No HOME from this process: the test's env says where everything lives.
  return runCliAsync(args, { HOME: env.HOME ?? cwd, ...env }, { cwd, input });
}

/**
 * Every file under `dir`, with its content. A file can vanish between the listing and the read (an atomic write's
 * temporary file, renamed to its final name): the listing is then taken again, so no file's content is missed.
 */
async function filesUnder(dir: string): Promise<{ path: string; text: string }[]> {
  for (;;) {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
    const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name));
    const read = await Promise.all(files.map(async (path) => ({ path, text: await readFile(path, 'utf8').catch(() => undefined) })));
    if (read.every((f) => f.text !== undefined)) return read as { path: string; text: string }[];
  }
}

describe('secret set | list | remove with the file store', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  before(async () => {
    data = await tempDir('wb-secret-cli-');
    env = isolated(data.dir);
  });
  after(() => data.cleanup());

  it('stores a value piped on stdin in a 0600 file in a 0700 directory, and never prints it', async () => {
    const set = await runWithStdin(['secret', 'set', 'github'], `${VALUE}\n`, env, data.dir);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /stored secret "github" in the secret file .*secrets\.json; use it in the config as \$\{secret:github\}/);
    const file = env.MCP_WORKBENCH_SECRETS_FILE!;
    assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { format: 1, secrets: { github: VALUE } }, 'one trailing newline is not part of the value');
    if (posix) {
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      assert.equal((await stat(join(data.dir, 'store'))).mode & 0o777, 0o700);
    }
    assert.ok(!`${set.stdout}${set.stderr}`.includes(VALUE));
  });

  it('lists names and the store, never values', async () => {
    assert.equal((await runWithStdin(['secret', 'set', 'openai.prod'], OTHER_VALUE, env, data.dir)).code, 0);
    const listed = await runCliAsync(['secret', 'list'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /secrets are kept in the secret file .*MCP_WORKBENCH_SECRET_STORE=file/);
    assert.match(listed.stdout, /github {2}\(secret file\)\n {2}openai\.prod {2}\(secret file\)/);
    const json = await runCliAsync(['secret', 'list', '--json'], env);
    assert.deepEqual(JSON.parse(json.stdout).secrets, [
      { name: 'github', store: 'file' },
      { name: 'openai.prod', store: 'file' },
    ]);
    for (const run of [listed, json]) assert.ok(!`${run.stdout}${run.stderr}`.includes(VALUE) && !`${run.stdout}${run.stderr}`.includes(OTHER_VALUE));
  });

  it('refuses a value given as an argument without repeating it, an invalid name and an empty value (each a usage error, exit 2)', async () => {
    const json = { ...env, WORKBENCH_LOG_FORMAT: 'json' };
    const asArgument = await runWithStdin(['secret', 'set', 'github', 'tok-typed-on-the-command-line'], '', json, data.dir);
    assert.equal(asArgument.code, 2);
    assert.equal(errorLine(asArgument.stderr).fields.code, 'USAGE');
    // the message is the product: it must say where the value goes instead
    assert.match(errorLine(asArgument.stderr).message, /never an argument.*stdin/);
    assert.ok(!asArgument.stderr.includes('tok-typed-on-the-command-line'));
    const badName = await runWithStdin(['secret', 'set', '1bad name'], VALUE, json, data.dir);
    assert.equal(badName.code, 2);
    assert.equal(errorLine(badName.stderr).fields.code, 'USAGE');
    // the message is the product: it must name the refused name and the rule it breaks
    assert.ok(errorLine(badName.stderr).message.includes('"1bad name"') && errorLine(badName.stderr).message.includes('63 letters'), badName.stderr);
    const empty = await runWithStdin(['secret', 'set', 'github'], '\n', json, data.dir);
    assert.equal(empty.code, 2);
    assert.equal(errorLine(empty.stderr).fields.code, 'USAGE');
    assert.equal(JSON.parse(await readFile(env.MCP_WORKBENCH_SECRETS_FILE!, 'utf8')).secrets.github, VALUE, 'the stored value is unchanged');
  });

  it('removes a secret, and says so when there is none (a usage error, exit 2, as auth logout of a name never signed in)', async () => {
    const removed = await runCliAsync(['secret', 'remove', 'openai.prod'], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /removed secret "openai\.prod" from the secret file/);
    const again = await runCliAsync(['secret', 'remove', 'openai.prod'], { ...env, WORKBENCH_LOG_FORMAT: 'json' });
    assert.equal(again.code, 2);
    assert.equal(errorLine(again.stderr).fields.code, 'USAGE');
    // the message is the product: it must name the secret and the command that lists the stored ones
    assert.ok(errorLine(again.stderr).message.includes('"openai.prod"') && errorLine(again.stderr).message.includes('mcp-workbench secret list'), again.stderr);
    assert.deepEqual(Object.keys(JSON.parse(await readFile(env.MCP_WORKBENCH_SECRETS_FILE!, 'utf8')).secrets), ['github']);
  });
});

describe('a secret file a person edited', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  before(async () => (data = await tempDir('wb-secret-edited-')));
  after(() => data.cleanup());

  it('with a name written twice, or not JSON, is never written over: the duplicate or the line and column are named', async () => {
    const env = isolated(data.dir);
    const file = env.MCP_WORKBENCH_SECRETS_FILE!;
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    for (const [text, expected] of [
      ['{"format":1,"secrets":{"a":"FIRST","a":"SECOND"}}', /secrets\.a: this key is written more than once/],
      ['{"format":1,"secrets":{"a":"x" "b":"y"}}', /at line 1, column 32/],
      ['{"format":1,\n  // mine\n  "secrets":{"a":"x"}}', /comment or a trailing comma at line 2, column 3/],
    ] as const) {
      await writeFile(file, text, { mode: 0o600 });
      const set = await runWithStdin(['secret', 'set', 'b'], 'x', env, data.dir);
      assert.equal(set.code, 1, set.stderr);
      assert.match(set.stderr, expected);
      assert.ok(set.stderr.includes(file) && /Nothing was changed/.test(set.stderr), set.stderr);
      assert.equal(await readFile(file, 'utf8'), text);
    }
  });
});

/** A healthy fixture that gets a secret in its env (under a harmless name) beside one whose secret is not stored. */
function secretConfig(): unknown {
  return {
    toolboxes: {
      dev: {
        mcpServers: {
          good: { ...fixtureServer('--env-digest'), env: { MODE: '${secret:github}' } },
          lacking: { ...fixtureServer(), env: { API_TOKEN: '${secret:not-stored}' } },
        },
      },
    },
  };
}

for (const transport of TRANSPORTS) {
  describe(`\${secret:NAME} in a served config over ${transport}`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let env: Record<string, string>;
    let wb: Awaited<ReturnType<typeof startOver>>;
    const shown: string[] = [];

    before(async () => {
      data = await tempDir('wb-secret-serve-');
      env = isolated(data.dir);
      const set = await runWithStdin(['secret', 'set', 'github'], VALUE, env, data.dir);
      assert.equal(set.code, 0, set.stderr);
      wb = await startOver(transport, secretConfig(), [], env);
    });
    after(async () => {
      await wb?.close();
      await data.cleanup();
    });

    it('gives the server the stored value', async () => {
      const result = await wb.useTool('dev', 'dev__good__env_digest', { name: 'MODE' });
      shown.push(JSON.stringify(result));
      assert.equal(textOf(result), createHash('sha256').update(VALUE).digest('hex'));
    });

    it('fails only the server whose secret is not stored, naming the secret and `mcp-workbench secret set`', async () => {
      const result = await wb.call('open_toolbox', { toolbox_name: 'dev', detail: 'full' });
      shown.push(JSON.stringify(result));
      assert.notEqual(result.isError, true, textOf(result));
      const opened = result.structuredContent as OpenToolboxResult;
      assert.deepEqual(opened.servers_connected, ['good']);
      assert.ok(opened.tools.some((t) => t.name === 'dev__good__echo'));
      const [failed, ...others] = opened.servers_failed;
      assert.equal(others.length, 0);
      assert.equal(failed!.server, 'lacking');
      assert.equal(failed!.code, 'SECRET_MISSING');
      assert.deepEqual(failed!.failure?.problems?.map((p) => [p.kind, p.path, p.secrets]), [['secret-missing', 'toolboxes.dev.mcpServers.lacking.env.API_TOKEN', ['not-stored']]]);
      assert.match(failed!.error, /\$\{secret:not-stored\} is not in the secret file/);
      // The fix is said once, in its problem; use_tool's text, for the model, ends with it.
      assert.match(failed!.failure?.problems?.[0]?.fix ?? '', /`mcp-workbench secret set not-stored`/);
      const refused = await wb.useTool('dev', 'dev__lacking__echo', { text: 'x' });
      shown.push(JSON.stringify(refused));
      assert.equal(refused.isError, true);
      assert.equal(workbenchErrorCode(refused), 'SECRET_MISSING');
      assert.match(textOf(refused), /To fix: .*`mcp-workbench secret set not-stored`/);
      assert.equal(textOf(await wb.useTool('dev', 'dev__good__echo', { text: 'still works' })), 'still works');
      assert.match(wb.stderr(), /server "lacking" of toolbox "dev" cannot start until its config is fixed.*mcp-workbench secret set not-stored/);
    });

    it('shows the value nowhere: answers, stderr, cache files', async () => {
      // The error of a stdio command line would repeat args; the secret would be redacted there too.
      shown.push(wb.stderr());
      for (const text of shown) assert.ok(!text.includes(VALUE), text);
      // The cache is written after the listing, off the call path: wait for it rather than race it.
      let cached: { path: string; text: string }[] = [];
      assert.ok(await waitFor(async () => (cached = await filesUnder(join(data.dir, 'cache'))).length > 0, 10_000), 'the catalog cache was written');
      for (const { path, text } of cached) assert.ok(!text.includes(VALUE), path);
    });
  });
}

describe('one-shot commands on a config with a stored and an unknown secret', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  let config: string;

  before(async () => {
    data = await tempDir('wb-secret-check-');
    env = isolated(data.dir);
    config = join(data.dir, 'workbench-config.json');
    await writeFile(config, JSON.stringify(secretConfig()));
    assert.equal((await runWithStdin(['secret', 'set', 'github'], VALUE, env, data.dir)).code, 0);
  });
  after(() => data.cleanup());

  it('validate exits 1 naming the secret and the command, from any directory', async () => {
    const run = await runWithStdin(['validate', '--config', config], '', env, '/');
    assert.equal(run.code, 1);
    // the message is the product: it must name the config path, the secret and the command that stores it
    assert.match(run.stderr, /toolboxes\.dev\.mcpServers\.lacking\.env\.API_TOKEN: \$\{secret:not-stored\} is not in the secret file/);
    assert.match(run.stderr, /mcp-workbench secret set not-stored/);
    assert.ok(!`${run.stdout}${run.stderr}`.includes(VALUE));
    const json = await runWithStdin(['validate', '--config', config, '--json'], '', env, '/');
    assert.equal(json.code, 1);
    assert.equal((JSON.parse(json.stdout) as { code: string }).code, 'SECRET_MISSING');
  });

  it('doctor reports the unknown secret and checks the other server', async () => {
    const run = await runCliAsync(['doctor', '--config', config, '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    const report = JSON.parse(run.stdout) as DoctorReport;
    const servers = report.toolboxes.flatMap((t) => t.servers);
    assert.equal(servers.find((s) => s.server === 'good')?.connected, true);
    const lacking = servers.find((s) => s.server === 'lacking');
    assert.equal(lacking?.connected, false);
    assert.match(JSON.stringify(lacking), /unknown secret not-stored/);
    assert.match(JSON.stringify(lacking), /mcp-workbench secret set not-stored/);
    assert.ok(!`${run.stdout}${run.stderr}`.includes(VALUE));
  });

  it('tools call gives the server the stored value, and prints it nowhere', async () => {
    const run = await runCliAsync(['tools', 'call', 'dev', 'dev__good__env_digest', '--args', '{"name":"MODE"}', '--json', '--config', config], env);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { isError?: boolean; content: { type: string; text: string }[] };
    assert.notEqual(result.isError, true, run.stdout);
    assert.equal(result.content[0]?.text, createHash('sha256').update(VALUE).digest('hex'));
    assert.ok(!`${run.stdout}${run.stderr}`.includes(VALUE));
  });

  it('tools search finds the tools of the server whose secret is stored', async () => {
    const run = await runCliAsync(['tools', 'search', 'environment digest', '--json', '--config', config], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /dev__good__env_digest/);
    assert.ok(!`${run.stdout}${run.stderr}`.includes(VALUE));
  });
});

describe('migrate --from CLIENT --secrets store', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  let client: string;
  let config: string;

  before(async () => {
    data = await tempDir('wb-secret-migrate-');
    env = isolated(data.dir);
    client = join(data.dir, 'claude_desktop_config.json');
    config = join(data.dir, 'workbench-config.json');
    await writeFile(
      client,
      JSON.stringify({
        mcpServers: {
          github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: VALUE, LOG_LEVEL: 'info' } },
          remote: { type: 'http', url: 'https://mcp.example.test/mcp', headers: { Authorization: `Bearer ${OTHER_VALUE}` } },
        },
      }),
    );
  });
  after(() => data.cleanup());

  it('shows the references without storing anything, then with --write stores the values and saves a config without them', async () => {
    const args = ['migrate', '--from', 'claude-desktop', client, '--toolbox', 'desk', '--secrets', 'store', '--config', config];
    const dry = await runWithStdin(args, '', env, data.dir);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /"GITHUB_PERSONAL_ACCESS_TOKEN": "\$\{secret:desk\.github\.GITHUB_PERSONAL_ACCESS_TOKEN\}"/);
    assert.match(dry.stdout, /"Authorization": "\$\{secret:desk\.remote\.Authorization\}"/);
    assert.match(dry.stdout, /With --write, these would be stored in the secret store:\n {2}- desk\.github\.GITHUB_PERSONAL_ACCESS_TOKEN\n {2}- desk\.remote\.Authorization/);
    await assert.rejects(stat(env.MCP_WORKBENCH_SECRETS_FILE!), 'nothing is stored without --write');

    const written = await runWithStdin([...args, '--write'], '', env, data.dir);
    assert.equal(written.code, 0, written.stderr);
    assert.deepEqual(JSON.parse(await readFile(env.MCP_WORKBENCH_SECRETS_FILE!, 'utf8')).secrets, {
      'desk.github.GITHUB_PERSONAL_ACCESS_TOKEN': VALUE,
      'desk.remote.Authorization': `Bearer ${OTHER_VALUE}`,
    });
    const saved = await readFile(config, 'utf8');
    assert.match(saved, /"LOG_LEVEL": "info"/, 'what is not a credential stays as written');
    for (const text of [dry.stdout, dry.stderr, written.stdout, written.stderr, saved]) {
      assert.ok(!text.includes(VALUE) && !text.includes(OTHER_VALUE), text);
    }
    const validated = await runWithStdin(['validate', '--config', config], '', env, data.dir);
    assert.equal(validated.code, 0, validated.stderr);
  });

  it('is refused without --from (exit 2)', async () => {
    const run = await runWithStdin(['migrate', '--secrets', 'store', '--config', config, '--json'], '', env, data.dir);
    assert.equal(run.code, 2);
    const refused = JSON.parse(run.stdout) as { ok: boolean; code: string; message: string };
    assert.deepEqual([refused.ok, refused.code], [false, 'USAGE']);
    // the message is the product: it must name the option and the one it needs
    assert.match(refused.message, /--secrets .*--from/);
  });
});

describe('a running workbench follows the secret file', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  let wb: Awaited<ReturnType<typeof startOver>>;

  before(async () => {
    data = await tempDir('wb-secret-follow-');
    env = isolated(data.dir);
    assert.equal((await runWithStdin(['secret', 'set', 'github'], VALUE, env, data.dir)).code, 0);
    wb = await startOver('stdio', secretConfig(), [], env);
  });
  after(async () => {
    await wb?.close();
    await data.cleanup();
  });

  it('starts the server whose secret was missing once `secret set` stores it, without a restart', async () => {
    const first = (await wb.call('open_toolbox', { toolbox_name: 'dev' })).structuredContent as OpenToolboxResult;
    assert.deepEqual(first.servers_failed.map((f) => f.server), ['lacking']);
    const set = await runWithStdin(['secret', 'set', 'not-stored'], OTHER_VALUE, env, data.dir);
    assert.equal(set.code, 0, set.stderr);
    let opened: OpenToolboxResult | undefined;
    const started = await waitFor(async () => {
      opened = (await wb.call('open_toolbox', { toolbox_name: 'dev' })).structuredContent as OpenToolboxResult;
      return opened.servers_failed.length === 0 && opened.servers_connected.includes('lacking');
    }, 20_000);
    assert.ok(started, `the server started once its secret was stored: ${JSON.stringify(opened)}\n${wb.stderr()}`);
    assert.deepEqual(opened?.servers_failed, [], wb.stderr());
    assert.ok(opened?.servers_connected.includes('lacking'), JSON.stringify(opened));
    assert.ok(!wb.stderr().includes(OTHER_VALUE));
  });
});
