import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
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

describe('a file saved as Latin-1 / Windows-1252 (bytes that are not UTF-8, no NUL bytes)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  before(async () => ({ dir, cleanup } = await tempDir()));
  after(() => cleanup());

  /** `{ … "description": "café" … }` with é as the single Latin-1 byte 0xE9, on line 3. */
  const latin1 = Buffer.concat([
    Buffer.from('{\n  "toolboxes": {\n    "dev": { "description": "caf'),
    Buffer.from([0xe9]),
    Buffer.from('", "mcpServers": { "a": { "command": "node" } } }\n  }\n}\n'),
  ]);
  const env = (): { env: Record<string, string> } => ({ env: { HOME: join(dir, 'home'), WORKBENCH_STATE_FILE: join(dir, 'state.json') } });

  it('validate, migrate and server add name the file, the byte and its line, and say to save it as UTF-8', async () => {
    const path = join(dir, 'latin1.json');
    await writeFile(path, latin1);
    for (const args of [['validate', '--config', path], ['migrate', '--config', path], ['server', 'add', 'dev', 'b', '--config', path, '--', 'node']]) {
      const result = runCli(args, env());
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.ok(result.stderr.includes(`${path} is not UTF-8 (byte 0xE9 at line 3;`), `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /save it as UTF-8/);
      assert.doesNotMatch(result.stderr, /caf|\uFFFD/, 'no byte of the file is echoed');
    }
    assert.deepEqual(await readFile(path), latin1, 'nothing was written over it (an edit would have turned the byte into U+FFFD)');
  });

  it('the tool state file too', async () => {
    const config = join(dir, 'ok.json');
    await writeFile(config, JSON.stringify({ toolboxes: { dev: { mcpServers: { a: { command: 'node' } } } } }));
    const state = join(dir, 'state.json');
    await writeFile(state, Buffer.concat([Buffer.from('{\n  "enabled": [],\n  "disabled": ["dev__a__caf'), Buffer.from([0xe9]), Buffer.from('"]\n}\n')]));
    const result = runCli(['tools', 'disable', '--force', '--config', config, 'dev__a__x'], env());
    assert.equal(result.code, 1, result.stderr);
    assert.ok(result.stderr.includes(`${state} is invalid at line 3, column 28: it is not UTF-8 (byte 0xE9;`), result.stderr);
    assert.doesNotMatch(result.stderr, /\uFFFD/);
  });
});
