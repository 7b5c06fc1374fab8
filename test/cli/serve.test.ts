import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isAlive } from '../../src/shared/process-tree.js';
import { fixtureServer, node, paths, startWorkbench, tempDir, waitFor } from '../helpers/workbench-process.js';
import { errorLine, logLines } from '../helpers/log-lines.js';

/** Starts `mcp-workbench serve` as a raw process so the test controls stdin, signals and reads stdout bytes. */
async function spawnServe(config: unknown, extraArgs: string[] = []): Promise<{ child: ChildProcess; stdout: () => string; stderr: () => string; dir: string }> {
  const { dir, cleanup } = await tempDir();
  after(cleanup);
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify(config));
  const child = spawn(node, [paths.cli, '--config', configPath, ...extraArgs], {
    stdio: ['pipe', 'pipe', 'pipe'],
    cwd: dir,
    // The catalog cache goes to the test's temp dir, never the real home.
    env: { ...process.env, MCP_WORKBENCH_CACHE_DIR: join(dir, 'catalog-cache') },
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return { child, stdout: () => out, stderr: () => err, dir };
}

function send(child: ChildProcess, message: object): void {
  child.stdin!.write(`${JSON.stringify(message)}\n`);
}

async function handshake(child: ChildProcess, stdout: () => string): Promise<void> {
  send(child, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.ok(await waitFor(() => stdout().includes('"id":1'), 60_000), 'initialize answered');
  send(child, { jsonrpc: '2.0', method: 'notifications/initialized' });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('serve: shutdown leaves nothing behind', () => {
  // SIGHUP: the terminal it runs in was closed (an SSH session ended, a terminal tab closed).
  for (const how of ['stdin close', 'SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`on ${how}: children and grandchildren are gone and the process exits 0`, async () => {
      const { dir, cleanup } = await tempDir();
      after(cleanup);
      const pidFile = join(dir, 'grandchild.pid');
      const stubbornPidFile = join(dir, 'stubborn-grandchild.pid');
      const { child, stdout } = await spawnServe({
        toolboxes: {
          tb: {
            mcpServers: {
              parent: fixtureServer('--grandchild', pidFile),
              stubborn: fixtureServer('--grandchild', stubbornPidFile, '--ignore-sigterm', '--ignore-stdin-close'),
            },
          },
        },
      });
      await handshake(child, stdout);
      send(child, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'tb' } } });
      assert.ok(await waitFor(() => stdout().includes('"id":2'), 10_000), 'open_toolbox answered');
      const grandchildren = [Number(await readFile(pidFile, 'utf8')), Number(await readFile(stubbornPidFile, 'utf8'))];
      assert.ok(grandchildren.every(isAlive), 'grandchildren are running before shutdown');

      if (how === 'stdin close') child.stdin!.end();
      else child.kill(how);
      const exit = await exitOf(child);
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.ok(await waitFor(() => !grandchildren.some(isAlive), 3000), `no grandchild left: ${grandchildren.filter(isAlive).join(', ')}`);
    });
  }
});

describe('serve: a client that goes away abruptly', () => {
  it('treats a broken stdout (EPIPE) as the end of the session: exit 0, nothing left running', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const pidFile = join(dir, 'grandchild.pid');
    const { child, stdout } = await spawnServe({ toolboxes: { tb: { mcpServers: { parent: fixtureServer('--grandchild', pidFile) } } } });
    await handshake(child, stdout);
    send(child, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'open_toolbox', arguments: { toolbox_name: 'tb' } } });
    assert.ok(await waitFor(() => stdout().includes('"id":2'), 10_000));
    const grandchild = Number(await readFile(pidFile, 'utf8'));
    child.stdout!.destroy();
    // The next answer hits the closed pipe.
    send(child, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'tb__parent__echo', arguments: { text: 'x' } } } });
    const exit = await exitOf(child);
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(await waitFor(() => !isAlive(grandchild), 3000), 'the grandchild was ended');
  });
});

describe('serve: the protocol channel', () => {
  it('writes only MCP messages to stdout, even when a downstream server prints garbage', async () => {
    const { child, stdout, stderr } = await spawnServe({ toolboxes: { tb: { mcpServers: { noisy: fixtureServer('--garbage-stdout') } } } }, ['--log-format', 'json']);
    await handshake(child, stdout);
    send(child, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'tb__noisy__echo', arguments: { text: 'clean' } } } });
    assert.ok(await waitFor(() => stdout().includes('"id":2'), 10_000));
    child.stdin!.end();
    await exitOf(child);
    const lines = stdout().split('\n').filter((l) => l.length > 0);
    assert.ok(lines.length >= 2);
    for (const line of lines) {
      const message = JSON.parse(line) as { jsonrpc?: string };
      assert.equal(message.jsonrpc, '2.0', `stdout line is JSON-RPC: ${line.slice(0, 80)}`);
    }
    assert.match(stdout(), /"text":"clean"/);
    const noise = logLines(stderr()).filter((l) => l.fields.event === 'stdout_noise');
    assert.ok(noise.length > 0, `the noise was logged on stderr:\n${stderr()}`);
    assert.equal(noise[0]!.scope, 'tb/noisy');
    assert.equal(typeof noise[0]!.fields.line_bytes, 'number');
  });

  it('answers malformed tools/call requests with -32602 and malformed use_tool parameters with a refusal', async () => {
    const { child, stdout } = await spawnServe({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } });
    await handshake(child, stdout);
    send(child, { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'use_tool', arguments: 'not an object' } });
    send(child, { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 5 } });
    send(child, { jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'open_toolbox', arguments: [1] } });
    send(child, { jsonrpc: '2.0', id: 14, method: 'tools/call', params: { name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'x', arguments: 'str' } } });
    assert.ok(await waitFor(() => ['"id":11', '"id":12', '"id":13', '"id":14'].every((id) => stdout().includes(id)), 10_000));
    child.stdin!.end();
    await exitOf(child);
    const answers = stdout()
      .split('\n')
      .filter((l) => l)
      .map((l) => JSON.parse(l) as { id?: number; error?: { code: number; message: string }; result?: { isError?: boolean; content: { text: string }[] } });
    // Not a tools/call the MCP schema allows (arguments not an object, name not a string): a protocol fault.
    for (const id of [11, 12, 13]) {
      const answer = answers.find((a) => a.id === id);
      assert.equal(answer?.error?.code, -32602, `request ${id}: ${JSON.stringify(answer)}`);
    }
    // A well-formed tools/call whose use_tool parameters are wrong: a refusal the model can correct itself from.
    const refusal = answers.find((a) => a.id === 14)!.result!;
    assert.equal(refusal.isError, true);
    assert.match(refusal.content[0]!.text, /"arguments" must be an object of the tool's arguments, got a string/);
  });

  it('warns about unknown options on stderr and still serves', async () => {
    const wb = await startWorkbench({ toolboxes: {} }, { args: ['--some-host-flag', '--another=1'], env: { WORKBENCH_LOG_FORMAT: 'json' } });
    try {
      assert.deepEqual((await wb.client.listTools()).tools.map((t) => t.name).sort(), ['open_toolbox', 'use_tool']);
      const warning = logLines(wb.stderr()).find((l) => l.fields.event === 'unknown_options');
      assert.deepEqual({ level: warning?.level, options: warning?.fields.options }, { level: 'warn', options: '--some-host-flag --another=1' }, wb.stderr());
    } finally {
      await wb.close();
    }
  });

  it('exits 1 with the reason on stderr when the config is invalid', async () => {
    const { child, stderr, stdout } = await spawnServe({ toolboxes: { 'bad__name': { mcpServers: {} } } }, ['--log-format', 'json']);
    const exit = await exitOf(child);
    assert.equal(exit.code, 1);
    assert.equal(stdout(), '');
    assert.equal(errorLine(stderr()).fields.code, 'CONFIG_INVALID');
    // the message is the product: it must name the invalid toolbox
    assert.match(errorLine(stderr()).message, /bad__name/);
  });
});
