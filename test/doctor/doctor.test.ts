import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { catalogProblems } from '../../src/doctor/catalog-problems.js';
import { type DoctorReport, type ServerReport } from '../../src/doctor/types.js';
import { isAlive } from '../../src/shared/process-tree.js';
import { runCliAsync } from '../helpers/cli-run.js';
import { errorLine } from '../helpers/log-lines.js';
import { everythingServer, fixtureServer, node, paths, tempDir, waitFor } from '../helpers/workbench-process.js';
import { fileURLToPath } from 'node:url';

const run = (args: string[], options: { env?: Record<string, string> } = {}) => runCliAsync(args, options.env);

function hasScript(): boolean {
  return process.platform === 'linux' && spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
}

function server(report: DoctorReport, name: string): ServerReport {
  const found = report.toolboxes.flatMap((t) => t.servers).find((s) => s.server === name);
  assert.ok(found, `no report for server ${name}`);
  return found;
}

describe('doctor', () => {
  let dir: string;
  let cleanup: (() => Promise<void>) | undefined;
  after(() => cleanup?.());
  before(async () => {
    const temp = await tempDir('wb-doctor-');
    cleanup = temp.cleanup;
    dir = temp.dir;
  });

  async function config(name: string, document: unknown): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, JSON.stringify(document, null, 2));
    return path;
  }

  it('a healthy toolbox: exit 0, time and tool count per server, children and grandchildren gone after', async () => {
    const pidFile = join(dir, 'healthy-grandchild.pid');
    const file = await config('healthy.json', {
      toolboxes: {
        dev: {
          mcpServers: {
            fx: fixtureServer('--grandchild', pidFile),
            more: fixtureServer('--tools', '3'),
            everything: everythingServer(),
          },
        },
      },
    });
    const result = await run(['doctor', '--config', file]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /\[ok\] {3}dev\/fx: connected in \d+ ms, \d+ tools/);
    assert.match(result.stdout, /\[ok\] {3}dev\/everything: connected in \d+ ms, \d+ tools/);
    assert.match(result.stdout, /3 of 3 servers connected\. 0 errors, 0 warnings\. Healthy\./);
    const fx = Number(/dev\/fx: connected in \d+ ms, (\d+) tools/.exec(result.stdout)![1]);
    const more = Number(/dev\/more: connected in \d+ ms, (\d+) tools/.exec(result.stdout)![1]);
    assert.equal(more - fx, 3);
    // the stream itself is the fact: the progress line is not a log line, and only a terminal gets it
    assert.doesNotMatch(result.stderr, /\r/, 'no progress line when stderr is not a terminal');
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    assert.ok(await waitFor(() => !isAlive(grandchild), 5_000), `grandchild ${grandchild} outlived doctor`);
  });

  it('a broken toolbox: missing command, crashing and hanging servers → exit 1, each reason, nothing left running', async () => {
    const crashPid = join(dir, 'crash-grandchild.pid');
    const hangPid = join(dir, 'hang-grandchild.pid');
    const file = await config('broken.json', {
      toolboxes: {
        ok: { mcpServers: { fx: fixtureServer() } },
        broken: {
          mcpServers: {
            missing: { command: 'mcp-workbench-no-such-command' },
            crash: fixtureServer('--crash-on-start', '3', '--grandchild', crashPid),
            hang: { ...fixtureServer('--never-initialize', '--grandchild', hangPid), connectTimeoutMs: 1500 },
          },
        },
      },
    });
    const result = await run(['doctor', '--config', file, '--toolbox', 'broken']);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.doesNotMatch(result.stdout, /ok\/fx/, '--toolbox checks only that toolbox');
    assert.match(result.stdout, /\[FAIL\] broken\/missing: not connected — command not found/);
    assert.match(result.stdout, /command "mcp-workbench-no-such-command" was not found/);
    assert.match(result.stdout, /\[FAIL\] broken\/crash: not connected — exited with code 3/);
    assert.match(result.stdout, /\| fixture: fatal startup error/);
    assert.match(result.stdout, /\[FAIL\] broken\/hang: not connected — timed out after 1500 ms/);
    assert.match(result.stdout, /0 of 3 servers connected, 3 failed\. 3 errors, 0 warnings\. Not healthy\./);
    for (const pidFile of [crashPid, hangPid]) {
      const pid = Number(await readFile(pidFile, 'utf8'));
      assert.ok(await waitFor(() => !isAlive(pid), 5_000), `grandchild ${pid} (${pidFile}) outlived doctor`);
    }
  });

  it('--json: a machine-readable report with the same findings', async () => {
    const file = await config('json.json', {
      toolboxes: {
        dev: {
          mcpServers: {
            fx: fixtureServer(),
            crash: fixtureServer('--crash-on-start', '3'),
            hang: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 60_000 },
            missing: { command: 'mcp-workbench-no-such-command' },
          },
        },
      },
    });
    const started = Date.now();
    const result = await run(['doctor', '--config', file, '--json', '--timeout', '5000']);
    assert.ok(Date.now() - started < 30_000, '--timeout applies, not the server\'s 60 s');
    assert.equal(result.code, 1, result.stderr);
    const report = JSON.parse(result.stdout) as DoctorReport;
    assert.equal(report.ok, false);
    assert.equal(report.config, file);
    assert.equal(report.timeoutMs, 5000);
    assert.deepEqual(report.summary, { servers: 4, connected: 1, failed: 3, errors: 3, warnings: 0 });
    const fx = server(report, 'fx');
    assert.equal(fx.connected, true);
    assert.equal(typeof fx.connectMs, 'number');
    assert.ok(fx.tools! > 10);
    assert.equal(fx.timeoutMs, 5000);
    assert.deepEqual(fx.problems, []);
    const crash = server(report, 'crash').failure!;
    assert.equal(crash.kind, 'exited');
    assert.equal(crash.exitCode, 3);
    assert.deepEqual(crash.stderr, ['fixture: fatal startup error']);
    assert.equal(server(report, 'hang').failure!.kind, 'timeout');
    assert.equal(server(report, 'hang').timeoutMs, 5000);
    assert.match(server(report, 'hang').failure!.summary, /^timed out after 5000 ms$/);
    assert.equal(server(report, 'missing').failure!.kind, 'command-not-found');
  });

  it('npx servers: the default timeout is serving\'s 60 s; a hang names the first download, a half-downloaded package names npx\'s cache', async () => {
    // Stand-ins named npx (the hint is about the command): one hangs before speaking MCP, one fails as a package whose
    // download was stopped midway does.
    const bin = join(dir, 'fake-npx');
    await mkdir(join(bin, 'hang'), { recursive: true });
    await mkdir(join(bin, 'broken'), { recursive: true });
    await writeFile(join(bin, 'hang', 'npx'), `#!/bin/sh\nexec ${JSON.stringify(node)} -e "setInterval(() => {}, 1000)"\n`, { mode: 0o755 });
    await writeFile(
      join(bin, 'broken', 'npx'),
      "#!/bin/sh\necho \"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /root/.npm/_npx/0123/node_modules/x/dist/index.js\" >&2\nexit 1\n",
      { mode: 0o755 },
    );
    const file = await config('npx.json', {
      toolboxes: {
        dev: {
          mcpServers: {
            fx: fixtureServer(),
            hang: { command: join(bin, 'hang', 'npx'), args: ['-y', 'some-server'], connectTimeoutMs: 1500 },
            broken: { command: join(bin, 'broken', 'npx'), args: ['-y', 'some-server'] },
          },
        },
      },
    });
    const result = await run(['doctor', '--config', file, '--json']);
    assert.equal(result.code, 1, result.stderr);
    const report = JSON.parse(result.stdout) as DoctorReport;
    assert.equal(report.timeoutMs, null);
    assert.equal(server(report, 'fx').timeoutMs, 60_000, 'a server without connectTimeoutMs gets the 60 s that serving gives it');
    assert.equal(server(report, 'hang').failure!.kind, 'timeout');
    assert.match(server(report, 'hang').failure!.message, /first start downloads the package with npx/);
    assert.match(server(report, 'broken').failure!.message, /Cannot find package 'zod'/);
    assert.match(server(report, 'broken').failure!.message, /npx cache .*~\/\.npm\/_npx/);
    const text = await run(['doctor', '--config', file]);
    assert.match(text.stdout, /Connect timeout: each server's connectTimeoutMs, else 60000 ms/);
    assert.match(text.stdout, /Delete the npx cache/);
  });

  it('catalog problems: canonical names over 64 characters and stdout noise are warnings (exit 0); has__double is fine', async () => {
    const toolbox = 'a-rather-long-toolbox-name-for-doctor';
    const file = await config('catalog.json', {
      toolboxes: {
        [toolbox]: { mcpServers: { 'and-a-long-server-name-too': fixtureServer('--tools', '1000') } },
        short: { mcpServers: { fx: fixtureServer(), noisy: fixtureServer('--garbage-stdout') } },
      },
    });
    const result = await run(['doctor', '--config', file, '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as DoctorReport;
    assert.equal(report.ok, true);
    const long = server(report, 'and-a-long-server-name-too');
    assert.ok(long.tools! >= 1000);
    const tooLong = long.problems.find((p) => p.kind === 'canonical-name-too-long')!;
    assert.equal(tooLong.severity, 'warning');
    assert.equal(tooLong.items.length, long.tools);
    assert.ok(tooLong.items.includes(`${toolbox}__and-a-long-server-name-too__gen_0999`));
    assert.deepEqual(server(report, 'fx').problems, [], 'dotted.name, dash-name and has__double are acceptable names');
    const noise = server(report, 'noisy').problems.find((p) => p.kind === 'stdout-noise')!;
    assert.ok(noise.items.includes('this is not json'), JSON.stringify(noise.items));
    const human = await run(['doctor', '--config', file]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, new RegExp(`\\[warn\\] ${long.tools} × canonical names \\(\\{toolbox\\}__\\{server\\}__\\{tool\\}\\) longer than 64 characters`));
    assert.match(human.stdout, /, and \d+ more/);
  });

  it('a live progress line on stderr when it is a terminal', { skip: !hasScript() && 'needs util-linux script(1) for a pseudo-terminal' }, async () => {
    const file = await config('tty.json', { toolboxes: { dev: { mcpServers: { fx: fixtureServer(), crash: fixtureServer('--crash-on-start', '3') } } } });
    const command = [node, paths.cli, 'doctor', '--config', file].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
    const home = dirname(file);
    const env = { PATH: process.env.PATH ?? '', HOME: home, MCP_WORKBENCH_CACHE_DIR: join(home, 'catalog-cache'), TERM: 'dumb' };
    const result = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', env, timeout: 60_000 });
    // The first line names every server still waited for (after 0 s, or 1 s on a loaded machine).
    assert.match(result.stdout, /\r\x1b\[2Kdoctor: 0\/2 checked \(\d+s\) — waiting for dev\/fx, dev\/crash/);
    assert.match(result.stdout, /\r\x1b\[2Kdoctor: \d\/2 checked, 1 failed/);
    assert.match(result.stdout, /\r\x1b\[2KConfig: /, 'the line is cleared before the report');
  });

  describe('remote servers', () => {
    let http: Server;
    let url: string;
    let closedUrl: string;
    before(async () => {
      http = createServer((request, response) => {
        request.resume();
        response.writeHead(401, { 'content-type': 'text/plain' }).end('no token');
      });
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/mcp`;
      await new Promise((resolve) => closed.close(resolve));
    });
    after(() => new Promise((resolve) => http.close(resolve)));

    it('reports the HTTP status, or that nothing listens', async () => {
      const file = await config('remote.json', {
        toolboxes: {
          web: {
            mcpServers: {
              denied: { type: 'http', url, headers: { Authorization: 'Bearer wrong' } },
              legacy: { type: 'sse', url },
              nobody: { type: 'http', url: closedUrl },
            },
          },
        },
      });
      const result = await run(['doctor', '--config', file, '--json']);
      assert.equal(result.code, 1, result.stderr);
      const report = JSON.parse(result.stdout) as DoctorReport;
      for (const name of ['denied', 'legacy']) {
        const failure = server(report, name).failure!;
        assert.equal(failure.kind, 'http-status', JSON.stringify(failure));
        assert.equal(failure.httpStatus, 401);
        assert.equal(failure.summary, 'HTTP 401 Unauthorized');
      }
      const nobody = server(report, 'nobody').failure!;
      assert.equal(nobody.kind, 'unreachable', JSON.stringify(nobody));
      assert.match(nobody.summary, /ECONNREFUSED/);
    });
  });

  it('an SSE server that opens its stream but never names its endpoint: timed out at connectTimeoutMs, reported, exit 1', async () => {
    // The stream stays open and sends only a comment: the SDK's SSE connect waits for an `endpoint` event forever.
    const silent = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(':hello\n\n');
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/sse`;
      const file = await config('silent-sse.json', {
        toolboxes: { dev: { mcpServers: { quiet: { type: 'sse', url, connectTimeoutMs: 1500 }, fx: fixtureServer() } } },
      });
      const result = await run(['doctor', '--config', file, '--json']);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      const report = JSON.parse(result.stdout) as DoctorReport;
      assert.equal(server(report, 'fx').connected, true);
      assert.match(JSON.stringify(server(report, 'quiet')), /did not complete the MCP handshake within 1500 ms/);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('a server naming ${user:dir} is checked with user local\'s folder where serve has it: beside the state file', async () => {
    const home = join(dir, 'user-dir-home');
    const state = join(dir, 'user-dir-state', 'state.json');
    await mkdir(home, { recursive: true });
    const file = await config('user-dir.json', { toolboxes: { dev: { mcpServers: { fx: { ...fixtureServer(), cwd: '${user:dir}' } } } } });
    const result = await run(['doctor', '--config', file, '--state-file', state], { env: { HOME: home } });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.ok(existsSync(join(dirname(state), 'users', 'local')), 'the folder serve would use for user local');
    assert.ok(!existsSync(join(home, '.mcp-workbench', 'users')), 'nothing made in the home folder');
  });

  it('a config the loader refuses: exit 1 with its message; an unknown toolbox: exit 2', async () => {
    const dynamic = fileURLToPath(new URL('../fixtures/configs/dynamic-mode.json', import.meta.url));
    const jsonLog = { WORKBENCH_LOG_FORMAT: 'json' };
    const refused = await run(['doctor', '--config', dynamic], { env: jsonLog });
    assert.equal(refused.code, 1);
    assert.equal(errorLine(refused.stderr).fields.code, 'CONFIG_DYNAMIC_MODE');
    const json = await run(['doctor', '--config', dynamic, '--json']);
    assert.equal(json.code, 1);
    assert.equal((JSON.parse(json.stdout) as { code: string }).code, 'CONFIG_DYNAMIC_MODE');
    const file = await config('one.json', { toolboxes: { dev: { mcpServers: {} } } });
    const unknown = await run(['doctor', '--config', file, '--toolbox', 'nope'], { env: jsonLog });
    assert.equal(unknown.code, 2);
    assert.equal(errorLine(unknown.stderr).fields.code, 'TOOLBOX_NOT_FOUND');
    // the message is the product: it must name the unknown toolbox and the ones there are
    assert.match(errorLine(unknown.stderr).message, /"nope".*toolboxes: dev/);
    assert.equal((await run(['doctor', '--config', file, '--timeout', 'soon'])).code, 2);
    const empty = await run(['doctor', '--config', file]);
    assert.equal(empty.code, 0);
    assert.match(empty.stdout, /Toolbox "dev": no servers/);
  });
});

describe('doctor catalog checks', () => {
  const ajv = new Ajv({ strict: false, validateSchema: false, addUsedSchema: false });
  const tool = (name: string, inputSchema: Record<string, unknown> = { type: 'object' }) => ({ name, inputSchema: inputSchema as { type: 'object' } });

  it('duplicates are an error; names, lengths and schemas some clients reject are warnings', () => {
    const problems = catalogProblems('tb', 'srv', [
      tool('ok'),
      tool('has__double'),
      tool('dotted.name'),
      tool('ok'),
      tool('has space'),
      tool('arr', { type: 'array' }),
      tool('union', { type: 'object', anyOf: [{ required: ['a'] }, { required: ['b'] }] }),
      tool('remote', { type: 'object', properties: { a: { $ref: 'https://example.test/schema.json' } } }),
      tool('broken', { type: 'object', properties: { a: { type: 'no-such-type' } } }),
      tool('x'.repeat(60)),
    ], ajv);
    const byKind = Object.fromEntries(problems.map((p) => [p.kind, p]));
    assert.equal(byKind['duplicate-name']!.severity, 'error');
    assert.deepEqual(byKind['duplicate-name']!.items, ['ok']);
    assert.deepEqual(byKind['name-characters']!.items, ['has space']);
    assert.deepEqual(byKind['schema-root-not-object']!.items, ['arr']);
    assert.deepEqual(byKind['schema-root-combinator']!.items, ['union (anyOf)']);
    assert.deepEqual(byKind['schema-external-ref']!.items, ['remote']);
    assert.equal(byKind['schema-not-compilable']!.items.length, 1);
    assert.match(byKind['schema-not-compilable']!.items[0]!, /^broken: /);
    assert.deepEqual(byKind['canonical-name-too-long']!.items, [`tb__srv__${'x'.repeat(60)}`]);
    for (const problem of problems) if (problem.kind !== 'duplicate-name') assert.equal(problem.severity, 'warning', problem.kind);
    assert.deepEqual(catalogProblems('tb', 'srv', [tool('has__double'), tool('dotted.name'), tool('dash-name')], ajv), []);
  });
});
