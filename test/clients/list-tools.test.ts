import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { logLines } from '../helpers/log-lines.js';
import { fixtureServer, runCli, startWorkbench, tempDir } from '../helpers/workbench-process.js';

// Every tools/list answer is the same first page of 3 tools with the same cursor: without a guard, 1,000 pages and
// "3000 tools" for 3 distinct ones.
const JSON_LOG = { WORKBENCH_LOG_FORMAT: 'json' };
const config = { toolboxes: { tb: { mcpServers: { stuck: fixtureServer('--stuck-cursor', '--page-size', '3') } } } };

function toolNames(result: CallToolResult): string[] {
  return (result.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
}

/** The server's JSON log lines (the workbench runs with WORKBENCH_LOG_FORMAT=json) name it, the fault and the count. */
function checkLog(stderr: string): void {
  const server = logLines(stderr).filter((l) => l.scope === 'tb/stuck');
  const warned = (problem: string) => server.find((l) => l.level === 'warn' && l.fields.problem === problem);
  assert.equal(warned('repeated-cursor')?.fields.tools, 3, stderr);
  assert.equal(warned('duplicate-names')?.fields.names, 3, stderr);
  assert.ok(server.some((l) => l.level === 'info' && l.fields.tools === 3 && typeof l.fields.duration_ms === 'number'), stderr);
}

describe('a paginator that repeats its cursor', () => {
  it('over stdio: the listing ends at once, each tool counted once, the server named', async () => {
    const wb = await startWorkbench(config, { env: JSON_LOG });
    try {
      const opened = await wb.call('open_toolbox', { toolbox_name: 'tb' });
      assert.notEqual(opened.isError, true);
      const names = toolNames(opened);
      assert.equal(names.length, 3);
      assert.equal(new Set(names).size, 3);
      checkLog(wb.stderr());
    } finally {
      await wb.close();
    }
  });

  it('over HTTP: the same', async () => {
    const token = randomBytes(16).toString('hex');
    const wb = await startHttpWorkbench(config, ['--http', '127.0.0.1:0'], { WORKBENCH_TOKEN: token, ...JSON_LOG });
    try {
      const session = await wb.connect({ authorization: `Bearer ${token}` });
      const opened = (await session.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'tb' } })) as CallToolResult;
      assert.equal(toolNames(opened).length, 3);
      await session.close();
    } finally {
      await wb.stop();
    }
    checkLog(wb.stderr());
  });

  describe('doctor and tools list', () => {
    let dir: string;
    let cleanup: () => Promise<void>;
    let path: string;
    before(async () => {
      ({ dir, cleanup } = await tempDir());
      path = join(dir, 'c.json');
      await writeFile(path, JSON.stringify(config));
    });
    after(() => cleanup());

    it('doctor counts distinct tools and reports the duplicates as an error', () => {
      const run = runCli(['doctor', '--config', path, '--json']);
      const report = JSON.parse(run.stdout) as { toolboxes: { servers: { tools: number; problems: { kind: string; items: string[] }[] }[] }[] };
      const server = report.toolboxes[0]!.servers[0]!;
      assert.equal(server.tools, 3);
      const duplicate = server.problems.find((p) => p.kind === 'duplicate-name');
      assert.equal(duplicate?.items.length, 3);
      assert.equal(run.code, 1);
      const text = runCli(['doctor', '--config', path]);
      assert.match(text.stdout, /tb\/stuck: connected in \d+ ms, 3 tools/);
    });

    it('tools list shows each tool once', () => {
      const run = runCli(['tools', 'list', '--config', path, '--json'], { env: { WORKBENCH_STATE_FILE: join(dir, 's.json'), ...JSON_LOG } });
      const report = JSON.parse(run.stdout) as { tools: { name: string }[] };
      assert.equal(report.tools.length, 3);
      assert.ok(logLines(run.stderr).some((l) => l.scope === 'tb/stuck' && l.fields.problem === 'repeated-cursor'), run.stderr);
    });
  });
});
