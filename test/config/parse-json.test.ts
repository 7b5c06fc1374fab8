import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseJsonText } from '../../src/config/parse-json.js';
import { runCli, tempDir } from '../helpers/workbench-process.js';
import { errorLine } from '../helpers/log-lines.js';

/** A toolbox, a server and a header each written twice; everything else valid. */
const DUPLICATED = `{
  "toolboxes": {
    "dev": { "mcpServers": { "a": { "command": "node" } } },
    "ops": {
      "mcpServers": {
        "b": { "command": "node", "args": [] },
        "b": { "type": "http", "url": "https://x.example/mcp", "headers": { "X-A": "1", "X-A": "2" } }
      }
    },
    "dev": { "mcpServers": {} }
  }
}
`;

describe('duplicate keys in the config', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let path: string;
  before(async () => {
    ({ dir, cleanup } = await tempDir());
    path = join(dir, 'dup.json');
    await writeFile(path, DUPLICATED);
  });
  after(() => cleanup());

  it('validate reports every duplicate with its JSON path, all at once, and fails', () => {
    const run = runCli(['validate', '--config', path]);
    assert.equal(run.code, 1);
    // validate's text report is the product: it must name every duplicate's path and how many there are
    for (const at of ['toolboxes.dev:', 'toolboxes.ops.mcpServers.b:', 'toolboxes.ops.mcpServers.b.headers.X-A:']) {
      assert.ok(run.stderr.includes(at), `${at} is named:\n${run.stderr}`);
    }
    assert.match(run.stderr, /3 problems/);
  });

  it('validate --json carries the same problems, with the CONFIG_INVALID code', () => {
    const run = runCli(['validate', '--config', path, '--json']);
    assert.equal(run.code, 1);
    const out = JSON.parse(run.stdout) as { valid: boolean; code: string; details: string[] };
    assert.equal(out.valid, false);
    assert.equal(out.code, 'CONFIG_INVALID');
    assert.deepEqual(
      out.details.map((d) => d.slice(0, d.indexOf(':'))),
      ['toolboxes.dev', 'toolboxes.ops.mcpServers.b', 'toolboxes.ops.mcpServers.b.headers.X-A'],
    );
  });

  it('serve refuses to start on it', () => {
    const run = runCli(['serve', '--config', path], { env: { WORKBENCH_STATE_FILE: join(dir, 'state.json'), WORKBENCH_LOG_FORMAT: 'json' } });
    assert.equal(run.code, 1);
    assert.equal(errorLine(run.stderr).fields.code, 'CONFIG_INVALID');
    // the message is the product: it must name where the duplicate is
    assert.ok(errorLine(run.stderr).message.includes('toolboxes.dev:'), run.stderr);
  });
});

describe('parseJsonText', () => {
  it('reports each duplicated key once per object, with its path, and keeps JSON.parse semantics', () => {
    const parsed = parseJsonText('{"a": 1, "a": 2, "a": 3, "b": [{"c": 1, "c": 2}], "__proto__": {"x": 1}}');
    assert.deepEqual(parsed.duplicateKeys, [['a'], ['b', 0, 'c']]);
    const value = parsed.value as Record<string, unknown>;
    assert.equal(value.a, 3);
    assert.ok(Object.hasOwn(value, '__proto__'), '__proto__ stays an own key, never a prototype');
  });

  it('finds nothing in a document without duplicates, however deep', () => {
    assert.deepEqual(parseJsonText(`${'['.repeat(5000)}${']'.repeat(5000)}`).duplicateKeys, []);
    assert.deepEqual(parseJsonText('{"a": {"a": {"a": 1}}}').duplicateKeys, []);
  });
});
