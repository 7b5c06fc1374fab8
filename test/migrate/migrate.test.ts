import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { importClientServers, type ClientKind } from '../../src/migrate/import-client.js';
import { sanitizeName } from '../../src/migrate/server-names.js';
import { formattingOf, insertMember, removeMember, renameKey } from '../../src/migrate/json-edit.js';
import { parseConfig } from '../../src/config/load.js';
import { configVariables } from '../../src/migrate/config-edit.js';
import { importIntoConfigText, migrateConfigText } from '../../src/migrate/migrate.js';
import { saveConfigFile } from '../../src/migrate/config-file.js';
import { unifiedDiff } from '../../src/migrate/text-diff.js';
import { isWorkbenchError } from '../../src/errors.js';
import { tempDir } from '../helpers/workbench-process.js';
import { fileURLToPath } from 'node:url';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/configs/${name}`, import.meta.url));
const read = (name: string): string => readFileSync(fixture(name), 'utf8');
const json = (text: string): unknown => JSON.parse(text.replace(/^\uFEFF/, ''));

/** The env that has every variable the document needs, so validity is checked apart from this shell. */
function envFor(document: unknown): Record<string, string> {
  return Object.fromEntries(configVariables(document).required.map((name) => [name, name === 'API_BASE_URL' ? 'https://x.test' : 'value']));
}

function assertValid(text: string, source = 'test.json'): void {
  const document = json(text);
  parseConfig(document, source, envFor(document));
}

describe('migrateConfigText: 0.9 → 0.10', () => {
  it('edits a JSONC config in place: its comments and trailing commas stay', () => {
    const before = [
      '{',
      '  "toolMode": "proxy",',
      '  // my toolboxes',
      '  "toolboxes": {',
      '    "dev": { "mcpServers": { "s": { "transport": "stdio", "command": "node", /* why */ }, }, },',
      '  },',
      '}',
      '',
    ].join('\n');
    const result = migrateConfigText(before, 'c.json');
    assert.match(result.after, /\/\/ my toolboxes/);
    assert.match(result.after, /\/\* why \*\//);
    assert.doesNotMatch(result.after, /toolMode|transport/);
    assert.match(result.after, /"type": "stdio"/);
  });

  it('removes toolMode, renames transport, keeps unknown keys as comments, and the result loads', () => {
    const before = read('migrate-0.9-dynamic.json');
    const result = migrateConfigText(before, 'old.json');
    const document = json(result.after) as { toolboxes: { dev: { mcpServers: Record<string, Record<string, unknown>> } } } & Record<string, unknown>;
    assert.equal('toolMode' in document, false);
    assert.equal(document._comment, (json(before) as Record<string, unknown>)._comment);
    const { filesystem, memory } = document.toolboxes.dev.mcpServers;
    assert.equal(filesystem!.type, 'stdio');
    assert.equal('transport' in filesystem!, false);
    assert.deepEqual(Object.keys(filesystem!), ['command', 'args', 'toolFilters', 'type']);
    assert.equal(memory!._enabled, true);
    assert.equal('enabled' in memory!, false);
    assert.deepEqual(
      result.changes.map((c) => c.path),
      ['toolMode', 'toolboxes.dev.mcpServers.filesystem', 'toolboxes.dev.mcpServers.memory', 'toolboxes.dev.mcpServers.memory.enabled'],
    );
    assert.match(result.notes.join('\n'), /open_toolbox/);
    assert.match(result.notes.join('\n'), /use_tool/);
    assert.deepEqual(result.variables.required, ['HOME']);
    assertValid(result.after);
  });

  it('edits the text in place: lines it does not change stay byte for byte', () => {
    const before = read('migrate-0.9-dynamic.json');
    const result = migrateConfigText(before, 'old.json');
    const removed = before.split('\n').filter((line) => !result.after.split('\n').includes(line));
    assert.deepEqual(removed, [
      '  "toolMode": "dynamic",',
      '          "transport": "stdio"',
      '          "transport": "stdio",',
      '          "enabled": true',
    ]);
    const diff = unifiedDiff(result.before, result.after, 'a', 'b');
    assert.match(diff, /^--- a\n\+\+\+ b\n@@ -1,/);
    assert.match(diff, /^-  "toolMode": "dynamic",$/m);
    assert.match(diff, /^\+          "type": "stdio"$/m);
  });

  it('leaves a 0.10 config alone, with a note about what 0.9 defaulted to', () => {
    for (const name of ['design-example.json', 'proxy-mode.json']) {
      const before = read(name);
      const result = migrateConfigText(before, name);
      if (name === 'design-example.json') {
        assert.equal(result.after, before);
        assert.deepEqual(result.changes, []);
        assert.match(result.notes.join('\n'), /without "toolMode" ran in dynamic mode/);
      } else {
        assert.deepEqual(result.changes.map((c) => c.path), ['toolMode']);
        assert.match(result.changes[0]!.message, /proxy/);
      }
      assertValid(result.after);
    }
  });

  it('keeps $ and _ comment keys and resolves transport aliases', () => {
    const result = migrateConfigText(read('comments-and-aliases.json'), 'c.json');
    const document = json(result.after) as Record<string, unknown>;
    assert.equal(document.$note, 'so is this');
    assert.equal(document.$schema, '../../../workbench-config.schema.json');
    const servers = (document.toolboxes as Record<string, { mcpServers: Record<string, Record<string, unknown>>; _why: string }>)['a_b-c1']!;
    assert.equal(servers._why, 'a toolbox comment');
    assert.deepEqual(servers.mcpServers['legacy-sse'], { type: 'sse', url: 'https://example.test/sse', _note: 'transport is an alias of type' });
    assert.deepEqual(servers.mcpServers.same, { type: 'http', url: 'http://localhost:3000/mcp' });
    assert.deepEqual(servers.mcpServers.local, { type: 'stdio', command: 'node', $comment: 'server comment' });
    assertValid(result.after);
  });

  it('renames names that break the rule to valid, unique ones', () => {
    const text = JSON.stringify({
      toolboxes: {
        'my tools': { mcpServers: { 'a.b': { command: 'x' }, 'a-b': { command: 'y' }, _lead: { command: 'z' }, 'x__y': { command: 'w' } } },
        'my-tools': { mcpServers: {} },
      },
    });
    const result = migrateConfigText(text, 't.json');
    const document = json(result.after) as { toolboxes: Record<string, { mcpServers: Record<string, unknown>; _parkedServers?: unknown }> };
    assert.deepEqual(Object.keys(document.toolboxes), ['my-tools-2', 'my-tools']);
    assert.deepEqual(Object.keys(document.toolboxes['my-tools-2']!.mcpServers), ['a-b-2', 'a-b', 'x_y']);
    // "_lead" is a server commented out, not a name to fix: it is parked, never revived as "lead"
    assert.deepEqual(document.toolboxes['my-tools-2']!._parkedServers, { _lead: { command: 'z' } });
    assert.match(result.notes.join('\n'), /my-tools-2__\{server\}__\{tool\}/);
    assertValid(result.after);
  });

  it('removes toolMode from one-line documents and keeps a byte-order mark and tabs', () => {
    assert.equal(migrateConfigText('{"toolMode":"dynamic","toolboxes":{}}', 'a').after, '{"toolboxes":{}}');
    assert.equal(migrateConfigText('{"toolboxes":{},"toolMode":"proxy"}\n', 'a').after, '{"toolboxes":{}}\n');
    const tabbed = '\uFEFF{\n\t"toolboxes": {\n\t\t"t": { "mcpServers": { "s": { "transport": "stdio", "command": "c" } } }\n\t},\n\t"toolMode": "dynamic"\n}\n';
    const result = migrateConfigText(tabbed, 'a');
    assert.equal(result.after, '\uFEFF{\n\t"toolboxes": {\n\t\t"t": { "mcpServers": { "s": { "type": "stdio", "command": "c" } } }\n\t}\n}\n');
  });

  it('refuses a file with duplicate keys, naming them (it is never re-serialised, which would drop one)', () => {
    const text = '{\n  "toolMode": "dynamic",\n  "toolboxes": { "a": { "mcpServers": {} } },\n  "toolboxes": { "b": { "mcpServers": {} } }\n}\n';
    assert.throws(
      () => migrateConfigText(text, 'dup.json'),
      (error: unknown) => isWorkbenchError(error, 'CONFIG_INVALID') && error.details.length === 1 && error.details[0]!.startsWith('toolboxes: '),
    );
  });

  it('refuses what it cannot fix, with the loader\'s problems', () => {
    assert.throws(
      () => migrateConfigText(read('many-problems.json'), 'many.json'),
      (error: unknown) => isWorkbenchError(error, 'CONFIG_INVALID') && error.details.some((d) => /timeoutMs/.test(d)),
    );
    const conflict = JSON.stringify({ toolboxes: { t: { mcpServers: { s: { type: 'http', transport: 'sse', url: 'https://x.test' } } } } });
    assert.throws(() => migrateConfigText(conflict, 'c.json'), (error: unknown) => isWorkbenchError(error, 'CONFIG_INVALID'));
    assert.throws(() => migrateConfigText('{ nope', 'bad.json'), (error: unknown) => isWorkbenchError(error, 'CONFIG_PARSE'));
  });
});

describe('importClientServers', () => {
  const importFile = (client: ClientKind, name: string, project?: string) =>
    importClientServers(client, json(read(name)), { source: fixture(name), ...(project !== undefined && { project }) });

  it('a workbench config: toolboxes and servers commented out with "_" or "$" stay parked, never imported as live ones', () => {
    const source = {
      toolboxes: {
        dev: { mcpServers: { fs: { command: 'node', args: ['x.js'] }, _parked: { command: 'node', args: ['old.js'] }, $note: 'a comment' } },
        _oldbox: { mcpServers: { a: { command: 'node' } } },
      },
    };
    const result = importClientServers('workbench', source, { source: '/w/other.json' });
    assert.deepEqual(result.servers.map(([name]) => name), ['fs'], 'the only toolbox that is not commented out, and its live server');
    assert.match(result.notes.join('\n'), /server "_parked" was left out: .*comments an entry out.*rename it in \/w\/other\.json to import it/);
    assert.doesNotMatch(result.notes.join('\n'), /\$note/);
    const parkedOnly = { toolboxes: { dev: { mcpServers: { _a: { command: 'node' } } } } };
    assert.throws(() => importClientServers('workbench', parkedOnly, { source: '/w/p.json' }), /toolbox "dev" has no servers to import/);
  });

  it('Claude Desktop: stdio entries, names made valid, literal secrets moved to ${VAR} references', () => {
    const result = importFile('claude-desktop', 'import-claude-desktop.json');
    assert.deepEqual(result.servers.map(([name]) => name), ['filesystem', 'github', 'brave-search', 'sqlite']);
    assert.deepEqual(result.servers[1]![1], {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-github'],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: '${GITHUB_PERSONAL_ACCESS_TOKEN}' },
    });
    assert.match(result.notes.join('\n'), /"brave\.search" is imported as "brave-search"/);
    assert.match(result.notes.join('\n'), /env GITHUB_PERSONAL_ACCESS_TOKEN held a literal credential; it now reads \$\{GITHUB_PERSONAL_ACCESS_TOKEN\}/);
    assert.doesNotMatch(JSON.stringify(result), /YOUR_TOKEN/);
  });

  it('Claude Code .mcp.json: stdio, http and sse entries with their ${VAR} references kept', () => {
    const result = importFile('claude-code', 'import-claude-code.json');
    assert.deepEqual(result.servers.map(([name]) => name), ['memory', 'sentry', 'api-server', 'internal_tools']);
    assert.deepEqual(result.servers[1]![1], { type: 'http', url: 'https://mcp.sentry.dev/mcp' });
    assert.deepEqual(result.servers[2]![1], { type: 'sse', url: '${API_BASE_URL:-https://api.example.com}/sse', headers: { Authorization: 'Bearer ${API_KEY}' } });
  });

  it('Claude Code ~/.claude.json: user scope, or with a project its servers too (the project wins on a name)', () => {
    const user = importFile('claude-code', 'import-claude-code-user.json');
    assert.deepEqual(user.servers.map(([name]) => name), ['context7', 'postgres']);
    assert.match(user.notes.join('\n'), /\/home\/alice\/src\/shop/);
    const shop = importFile('claude-code', 'import-claude-code-user.json', '/home/alice/src/shop/');
    assert.deepEqual(shop.servers.map(([name]) => name), ['context7', 'postgres', 'playwright']);
    assert.match(JSON.stringify(shop.servers[1]![1]), /localhost\/shop/);
    assert.throws(() => importFile('claude-code', 'import-claude-code-user.json', '/nowhere'), /Projects with servers: \/home\/alice\/src\/shop/);
  });

  it('VS Code: ${input:…} → ${VAR} with what it was, ${workspaceFolder} → the project folder as a default', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    await mkdir(join(dir, 'project', '.vscode'), { recursive: true });
    const source = join(dir, 'project', '.vscode', 'mcp.json');
    const result = importClientServers('vscode', json(read('import-vscode.json')), { source });
    const servers = Object.fromEntries(result.servers) as Record<string, Record<string, unknown>>;
    assert.deepEqual(servers.github!.headers, { Authorization: 'Bearer ${GITHUB_TOKEN}' });
    assert.deepEqual(servers.perplexity!.env, { PERPLEXITY_API_KEY: '${PERPLEXITY_KEY}' });
    assert.deepEqual(servers['workspace-files']!.args, ['-y', '@modelcontextprotocol/server-filesystem', `\${WORKSPACE_FOLDER:-${join(dir, 'project')}}`]);
    assert.equal('envFile' in servers['workspace-files']!, false);
    assert.deepEqual(result.variables.map((v) => v.name), ['GITHUB_TOKEN', 'PERPLEXITY_KEY', 'WORKSPACE_FOLDER']);
    assert.match(result.variables[0]!.reason, /GitHub Personal Access Token/);
    assert.match(result.notes.join('\n'), /envFile/);
  });

  it('skips what it cannot express and says so; refuses a file of another client', () => {
    const result = importClientServers(
      'vscode',
      {
        servers: {
          ok: { command: 'node', args: ['s.js', 8080], env: { PORT: 8080, ON: true }, dev: { watch: 'src/**' } },
          off: { command: 'x', disabled: true },
          ws: { type: 'ws', url: 'ws://x' },
          nothing: {},
          remote: { url: 'https://x.test/mcp', headers: { Authorization: 'Bearer ${env:TOKEN}' }, cwd: '${userHome}' },
          odd: { command: 'x', args: ['${config:editor.tabSize}', '${/}'] },
        },
      },
      { source: '/home/u/.config/Code/User/mcp.json' },
    );
    const servers = Object.fromEntries(result.servers) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(servers), ['ok', 'remote', 'odd']);
    assert.deepEqual(servers.ok, { command: 'node', args: ['s.js', '8080'], env: { PORT: '8080', ON: 'true' } });
    assert.deepEqual(servers.remote, { type: 'http', url: 'https://x.test/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } });
    const notes = result.notes.join('\n');
    for (const expected of [/"off" was skipped: it is marked "disabled": true/, /"ws" was skipped: its type "ws"/, /"nothing" was skipped/, /dev/, /"type": "http"/, /\$\{config:editor\.tabSize\} has no workbench equivalent/]) {
      assert.match(notes, expected);
    }
    assert.throws(
      () => importClientServers('vscode', json(read('import-claude-code.json')), { source: 'x.json' }),
      (error: unknown) => isWorkbenchError(error, 'CONFIG_INVALID') && /try --from claude-code/.test(error.message),
    );
    assert.throws(() => importClientServers('claude-desktop', { mcpServers: {} }, { source: 'x.json' }), /nothing to import/);
  });

  it('sanitizeName gives names the schema accepts', () => {
    const pattern = /^(?!_)(?!.*__)[A-Za-z0-9_-]+(?<!_)$/;
    for (const name of ['brave.search', '__x__', 'café', 'my server (beta)', '---', '', 'a___b', '日本']) assert.match(sanitizeName(name), pattern, name);
    assert.equal(sanitizeName('café au lait'), 'cafe-au-lait');
    assert.equal(sanitizeName('a___b'), 'a_b');
  });
});

describe('importIntoConfigText', () => {
  const imported = importClientServers('claude-code', json(read('import-claude-code.json')), { source: '/p/.mcp.json' });

  it('creates a new config with $schema', () => {
    const result = importIntoConfigText(undefined, '/c/workbench-config.json', imported, { toolbox: 'code', from: '/p/.mcp.json', schema: './workbench-config.schema.json' });
    const document = json(result.after) as Record<string, unknown>;
    assert.equal(document.$schema, './workbench-config.schema.json');
    assert.deepEqual(Object.keys((document.toolboxes as Record<string, { mcpServers: object }>).code!.mcpServers), ['memory', 'sentry', 'api-server', 'internal_tools']);
    assert.deepEqual(result.variables.required, ['HOME', 'API_KEY', 'INTERNAL_API_KEY']);
    assert.deepEqual(result.variables.optional, ['API_BASE_URL']);
    assertValid(result.after);
  });

  it('appends a toolbox to an existing file in its own style, migrating it too', () => {
    const before = read('migrate-0.9-dynamic.json');
    const result = importIntoConfigText(before, 'old.json', imported, { toolbox: 'code', from: '/p/.mcp.json', description: 'From Claude Code' });
    assert.ok(result.after.includes('\n    },\n    "code": {\n      "description": "From Claude Code",\n      "mcpServers": {\n        "memory": {\n'));
    assert.deepEqual(Object.keys((json(result.after) as { toolboxes: object }).toolboxes), ['dev', 'code']);
    assert.ok(result.changes.some((c) => c.path === 'toolMode'));
    assertValid(result.after);
  });

  it('refuses to replace a toolbox; --merge adds only servers that are not there', () => {
    const existing = JSON.stringify({ toolboxes: { code: { mcpServers: { memory: { command: 'other' } } } } }, null, 2);
    assert.throws(() => importIntoConfigText(existing, 'c.json', imported, { toolbox: 'code', from: 'x' }), (error: unknown) => isWorkbenchError(error, 'USAGE'));
    const merged = importIntoConfigText(existing, 'c.json', imported, { toolbox: 'code', from: 'x', merge: true });
    const servers = (json(merged.after) as { toolboxes: { code: { mcpServers: Record<string, unknown> } } }).toolboxes.code.mcpServers;
    assert.deepEqual(servers.memory, { command: 'other' });
    assert.deepEqual(Object.keys(servers), ['memory', 'sentry', 'api-server', 'internal_tools']);
    assert.match(merged.notes.join('\n'), /"memory" already exists .* the existing entry was kept/);
    const again = importIntoConfigText(merged.after, 'c.json', imported, { toolbox: 'code', from: 'x', merge: true });
    assert.equal(again.after, merged.after);
  });
});

describe('json-edit and diff helpers', () => {
  const text = '{\n  "a": 1,\n  "b": 2,\n  "c": 3,\n  "d": { "x": [1, 2] }\n}';

  it('removes any run of members, leaving the other lines byte for byte', () => {
    for (const keys of [['a'], ['b', 'c'], ['d'], ['c', 'd'], ['a', 'c'], ['a', 'b', 'c', 'd']]) {
      const edited = keys.reduce((t, key) => removeMember(t, [key]), text);
      const kept = ['a', 'b', 'c', 'd'].filter((k) => !keys.includes(k));
      assert.deepEqual(Object.keys(JSON.parse(edited) as object), kept, keys.join());
      const lines = text.split('\n').filter((line) => kept.some((k) => line.startsWith(`  "${k}"`)));
      for (const line of lines) assert.ok(edited.includes(line.replace(/,$/, '')), `${keys.join()}: ${line}`);
    }
    assert.equal(removeMember(text, ['a']), '{\n  "b": 2,\n  "c": 3,\n  "d": { "x": [1, 2] }\n}');
    assert.equal(removeMember(text, ['d']), '{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}');
    assert.equal(removeMember(text, ['nope']), text);
  });

  it('renames a key in place and inserts members laid out like the file, without touching their neighbours', () => {
    assert.equal(renameKey(text, ['d'], 'e'), text.replace('"d"', '"e"'));
    assert.equal(
      insertMember(text, [], 'e', { f: ['g'] }, formattingOf(text)),
      '{\n  "a": 1,\n  "b": 2,\n  "c": 3,\n  "d": { "x": [1, 2] },\n  "e": {\n    "f": [\n      "g"\n    ]\n  }\n}',
    );
    const empty = '{\n  "t": {}\n}';
    assert.equal(insertMember(empty, ['t'], 'k', 1, formattingOf(empty)), '{\n  "t": {\n    "k": 1\n  }\n}');
    const tabbed = '{\n\t"t": {\n\t\t"a": 1\n\t}\n}';
    assert.equal(insertMember(tabbed, ['t'], 'k', { x: 1 }, formattingOf(tabbed)), '{\n\t"t": {\n\t\t"a": 1,\n\t\t"k": {\n\t\t\t"x": 1\n\t\t}\n\t}\n}');
    const oneLine = '{ "t": { "a": 1 } }';
    const inserted = insertMember(oneLine, ['t'], 'k', 2, formattingOf(oneLine));
    assert.ok(!inserted.includes('\n'), inserted);
    assert.deepEqual(JSON.parse(inserted), { t: { a: 1, k: 2 } });
  });

  it('unifiedDiff numbers hunks like diff -u', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const after = before.replace('line 3\n', '').replace('line 18\n', 'line 18\nnew\n');
    assert.equal(
      unifiedDiff(before, after, 'a', 'b'),
      ['--- a', '+++ b', '@@ -1,6 +1,5 @@', ' line 1', ' line 2', '-line 3', ' line 4', ' line 5', ' line 6',
        '@@ -16,5 +15,6 @@', ' line 16', ' line 17', ' line 18', '+new', ' line 19', ' line 20', ''].join('\n'),
    );
    assert.equal(unifiedDiff('x\n', 'x\n', 'a', 'b'), '');
    assert.equal(unifiedDiff('', 'a\nb\n', '/dev/null', 'b'), '--- /dev/null\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n');
  });

  it('unifiedDiff shows a change of the trailing newline as a changed last line, marked', () => {
    assert.equal(unifiedDiff('x\ny\n', 'x\ny', 'a', 'b'), '--- a\n+++ b\n@@ -1,2 +1,2 @@\n x\n-y\n+y\n\\ No newline at end of file\n');
    assert.equal(unifiedDiff('{}', '{}\n', 'a', 'b'), '--- a\n+++ b\n@@ -1,1 +1,1 @@\n-{}\n\\ No newline at end of file\n+{}\n');
  });
});

describe('saveConfigFile', () => {
  it('keeps the original bytes as a backup, never overwrites a backup, and refuses a file changed meanwhile', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const path = join(dir, 'workbench-config.json');
    const original = Buffer.from('{ "toolMode": "dynamic", "toolboxes": {} }\n');
    await writeFile(path, original, { mode: 0o600 });
    const now = new Date('2025-01-02T03:04:05.678Z');
    await writeFile(`${path}.bak-20250102T030405Z`, 'an older backup');
    const { backup } = await saveConfigFile(path, '{ "toolboxes": {} }\n', original, now);
    assert.equal(backup, `${path}.bak-20250102T030405Z-2`);
    assert.deepEqual(await readFile(backup!), original);
    assert.equal(await readFile(`${path}.bak-20250102T030405Z`, 'utf8'), 'an older backup');
    assert.equal(await readFile(path, 'utf8'), '{ "toolboxes": {} }\n');
    assert.equal((await import('node:fs')).statSync(path).mode & 0o777, 0o600);
    await assert.rejects(saveConfigFile(path, 'x', original, now), (e: unknown) => isWorkbenchError(e, 'CONFIG_UNWRITABLE') && e.message.includes(path));
    await assert.rejects(saveConfigFile(path, 'x', undefined, now), (e: unknown) => isWorkbenchError(e, 'CONFIG_UNWRITABLE') && e.message.includes(path));
    const files = ['workbench-config.json', 'workbench-config.json.bak-20250102T030405Z', 'workbench-config.json.bak-20250102T030405Z-2'];
    assert.deepEqual((await readdir(dir)).sort(), files, 'no temp file left, no backup for a refused save');
    const created = join(dir, 'new.json');
    assert.deepEqual(await saveConfigFile(created, '{}\n', undefined, now), {});
    assert.equal(await readFile(created, 'utf8'), '{}\n');
  });
});
