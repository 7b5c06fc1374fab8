import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { DoctorReport } from '../../src/doctor/types.js';
import { runCliAsync } from '../helpers/cli-run.js';
import { fixtureServer, node, tempDir } from '../helpers/workbench-process.js';

const modernFixture = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));

describe('doctor reports each server\'s protocol era', () => {
  it('legacy for a handshake server, modern 2026-07-28 for a modern-only one, in text and JSON', async () => {
    const { dir, cleanup } = await tempDir('wb-doctor-eras-');
    try {
      const file = join(dir, 'eras.json');
      await writeFile(file, JSON.stringify({ toolboxes: { mix: { mcpServers: { old: fixtureServer(), new: { command: node, args: [modernFixture] } } } } }));
      const text = await runCliAsync(['doctor', '--config', file]);
      assert.equal(text.code, 0, text.stdout + text.stderr);
      assert.match(text.stdout, /mix\/old: connected in \d+ ms, \d+ tools, legacy protocol 2025-11-25/);
      assert.match(text.stdout, /mix\/new: connected in \d+ ms, 6 tools, modern protocol 2026-07-28/);
      const json = await runCliAsync(['doctor', '--config', file, '--json']);
      const report = JSON.parse(json.stdout) as DoctorReport;
      const servers = new Map(report.toolboxes.flatMap((t) => t.servers).map((s) => [s.server, s]));
      assert.deepEqual(servers.get('old')?.protocol, { era: 'legacy', version: '2025-11-25' });
      assert.deepEqual(servers.get('new')?.protocol, { era: 'modern', version: '2026-07-28' });
    } finally {
      await cleanup();
    }
  });
});
