import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { AuditRecord } from '../../src/audit/audit-log.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { assertIsoTime, errorLine } from '../helpers/log-lines.js';
import { fixtureEvents, fixtureServer, runCli, startWorkbench, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * README "Audit log": `serve --audit-log PATH` appends one JSON line per use_tool call and per open_toolbox — who,
 * what, when, how long, how it ended, how big — never values; read back after calls over stdio and HTTP.
 */
const config = { toolboxes: { tb: { mcpServers: { fx: { ...fixtureServer(), timeoutMs: 1000 } } } } };
const SECRET = 'argument-value-never-in-the-audit-log';

async function auditDir(): Promise<string> {
  const { dir, cleanup } = await tempDir('wb-audit-');
  after(cleanup);
  return dir;
}

async function records(path: string): Promise<AuditRecord[]> {
  const text = await readFile(path, 'utf8');
  assert.ok(!text.includes(SECRET), 'no argument value');
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as AuditRecord);
}

function checkShape(record: AuditRecord): void {
  assertIsoTime(record.time);
  assert.ok(record.event === 'call' || record.event === 'open');
  assert.ok(Number.isInteger(record.duration_ms) && record.duration_ms >= 0);
  assert.ok(['ok', 'tool_error', 'failed', 'cancelled', 'timeout'].includes(record.outcome));
  assert.deepEqual(Object.keys(record).sort(), ['code', 'duration_ms', 'event', 'outcome', 'principal', 'result_bytes', 'server', 'session', 'time', 'tool', 'toolbox']);
}

describe('audit log', () => {
  it('over stdio: every call and open, with its outcome, and never a value', async () => {
    const dir = await auditDir();
    const file = join(dir, 'logs', 'audit.jsonl');
    const fxLog = join(dir, 'fixture-events.jsonl');
    const hangCalls = async (): Promise<number> => (await fixtureEvents(fxLog)).filter((e) => e.event === 'call' && e.tool === 'hang').length;
    const logged = { toolboxes: { tb: { mcpServers: { fx: { ...fixtureServer('--log', fxLog), timeoutMs: 1000 } } } } };
    const wb = await startWorkbench(logged, { args: ['--audit-log', file, '--disabled-tools', 'tb__fx__pid'] });
    try {
      await wb.call('open_toolbox', { toolbox_name: 'tb' });
      assert.equal((await wb.useTool('tb', 'echo', { text: SECRET })).isError, undefined);
      assert.equal((await wb.useTool('tb', 'fail', { message: SECRET })).isError, true);
      assert.equal((await wb.useTool('tb', 'add', { a: SECRET })).isError, true);
      assert.equal((await wb.useTool('tb', 'pid', {})).isError, true);
      assert.equal((await wb.useTool('tb', 'hang', {})).isError, true);
      const controller = new AbortController();
      const hangsBefore = await hangCalls();
      const cancelled = wb.client
        .callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'hang', arguments: {} } }, undefined, { signal: controller.signal })
        .catch(() => undefined);
      // Cancelled once the call has reached the server (well inside its 1 s timeout).
      assert.ok(await waitFor(async () => (await hangCalls()) > hangsBefore, 10_000), 'the second hang call reached the server');
      controller.abort();
      await cancelled;
    } finally {
      await wb.close();
    }
    const lines = await records(file);
    lines.forEach(checkShape);
    assert.ok(lines.every((l) => l.session === 'stdio' && l.principal === 'stdio'));
    const call = (tool: string): AuditRecord | undefined => lines.find((l) => l.event === 'call' && l.tool === tool);
    assert.deepEqual(
      lines.filter((l) => l.event === 'open').map((l) => [l.toolbox, l.outcome]),
      [['tb', 'ok']],
    );
    assert.equal(call('echo')?.server, 'fx');
    assert.equal(call('echo')?.outcome, 'ok');
    assert.ok((call('echo')?.result_bytes ?? 0) > 0);
    assert.equal(call('fail')?.outcome, 'tool_error');
    assert.deepEqual([call('add')?.outcome, call('add')?.code], ['failed', 'INVALID_ARGUMENTS']);
    assert.deepEqual([call('pid')?.outcome, call('pid')?.code], ['failed', 'TOOL_DISABLED']);
    const hangs = lines.filter((l) => l.tool === 'hang').map((l) => l.outcome);
    assert.deepEqual(hangs.sort(), ['cancelled', 'timeout']);
  });

  it('over HTTP: who called, by token, never the token itself', async () => {
    const file = join(await auditDir(), 'audit.jsonl');
    const [alice, bob] = ['alice-token-0123456789abcdef', 'bob-token-fedcba9876543210'];
    const wb = await startHttpWorkbench(config, ['--http', '0', '--audit-log', file], { WORKBENCH_TOKEN: `${alice},${bob}` });
    try {
      for (const token of [alice, bob]) {
        const session = await wb.connect({ authorization: `Bearer ${token}` });
        await session.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'echo', arguments: { text: 'x' } } });
        await session.close();
      }
    } finally {
      assert.equal(await wb.stop(), 0);
    }
    const text = await readFile(file, 'utf8');
    assert.ok(!text.includes(alice) && !text.includes(bob), 'no token in the audit log');
    const principals = [...new Set((await records(file)).filter((l) => l.event === 'call').map((l) => l.principal))];
    assert.equal(principals.length, 2, JSON.stringify(principals));
    assert.ok(principals.every((p) => typeof p === 'string' && /^token:[0-9a-f]{8}$/.test(p)));
  });

  it('over HTTP: the session id of each client', async () => {
    const file = join(await auditDir(), 'audit.jsonl');
    const wb = await startHttpWorkbench(config, ['--http', '0', '--audit-log', file]);
    let ids: string[] = [];
    try {
      const sessions = [await wb.connect(), await wb.connect()];
      for (const session of sessions) {
        await session.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'tb' } });
        await session.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'echo', arguments: { text: SECRET } } });
      }
      ids = sessions.map((s) => s.transport.sessionId!);
      for (const session of sessions) await session.close();
    } finally {
      assert.equal(await wb.stop(), 0);
    }
    const lines = await records(file);
    lines.forEach(checkShape);
    for (const id of ids) {
      const mine = lines.filter((l) => l.session === id);
      assert.deepEqual(mine.map((l) => [l.event, l.outcome]), [['open', 'ok'], ['call', 'ok']], JSON.stringify(lines));
    }
  });

  it('rotates by size: whole lines in each file, at most --audit-log-keep old files', async () => {
    const dir = await auditDir();
    const file = join(dir, 'audit.jsonl');
    const wb = await startWorkbench(config, { args: ['--audit-log', file, '--audit-log-max-bytes', '600', '--audit-log-keep', '2'] });
    const calls = 12;
    try {
      for (let i = 0; i < calls; i++) await wb.useTool('tb', 'echo', { text: `${i}` });
    } finally {
      await wb.close();
    }
    assert.ok(existsSync(`${file}.1`) && existsSync(`${file}.2`));
    assert.equal(existsSync(`${file}.3`), false);
    let kept = 0;
    for (const path of [file, `${file}.1`, `${file}.2`]) {
      const text = await readFile(path, 'utf8');
      assert.ok(Buffer.byteLength(text) <= 600, `${path} is within the limit`);
      const lines = await records(path);
      lines.forEach(checkShape);
      kept += lines.length;
    }
    assert.ok(kept < calls, 'the oldest lines were rotated away');
  });

  it('refuses to serve when the audit log cannot be opened', async () => {
    const dir = await auditDir();
    const config = join(dir, 'workbench-config.json');
    await writeFile(config, JSON.stringify({ toolboxes: {} }));
    await writeFile(join(dir, 'a-file'), '');
    const run = runCli(['serve', '--config', config, '--audit-log', join(dir, 'a-file', 'audit.jsonl')], { env: { WORKBENCH_LOG_FORMAT: 'json' } });
    assert.equal(run.code, 1);
    assert.equal(errorLine(run.stderr).fields.code, 'AUDIT_UNWRITABLE');
    // the message is the product: it must name the file it could not open
    assert.ok(errorLine(run.stderr).message.includes(join(dir, 'a-file', 'audit.jsonl')), run.stderr);
  });
});
