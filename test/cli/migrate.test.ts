import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fixtureServer, node, paths, runCli, tempDir, textOf } from '../helpers/workbench-process.js';
import { fileURLToPath } from 'node:url';

/** `migrate --json`'s answer to a run that failed: the error's code, message and details. */
function failureOf(run: { stdout: string }): { code: string; message: string; details: string[] } {
  const answer = JSON.parse(run.stdout) as { ok: boolean; code: string; message: string; details: string[] };
  assert.equal(answer.ok, false, run.stdout);
  return answer;
}

const run = runCli;

const fixtureConfig = (name: string): string => fileURLToPath(new URL(`../fixtures/configs/${name}`, import.meta.url));

/** Starts `serve --config <path>` (the config exactly as written on disk) with an SDK client over stdio. */
async function serveFile(configPath: string, cwd: string): Promise<{ client: Client; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({
    command: node,
    args: [paths.cli, 'serve', '--config', configPath],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, MCP_WORKBENCH_CACHE_DIR: join(cwd, 'catalog-cache') },
    stderr: 'pipe',
    cwd,
  });
  const client = new Client({ name: 'migrate-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

describe('migrate: a 0.9 dynamic config', () => {
  let dir: string;
  let file: string;
  let original: string;
  let cleanup: (() => Promise<void>) | undefined;
  after(() => cleanup?.());

  before(async () => {
    const temp = await tempDir('wb-migrate-');
    cleanup = temp.cleanup;
    dir = temp.dir;
    file = join(dir, 'workbench-config.json');
    const fx = fixtureServer();
    original = `${JSON.stringify(
      {
        _comment: 'written for 0.9',
        toolMode: 'dynamic',
        toolboxes: { dev: { description: 'fixture', mcpServers: { fx: { transport: 'stdio', command: fx.command, args: fx.args } } } },
      },
      null,
      2,
    )}\n`;
    await writeFile(file, original);
  });

  it('is rejected by validate with the dynamic-mode error that points to migrate', () => {
    const result = run(['validate', '--config', file]);
    assert.equal(result.code, 1);
    // the message is the product: it must name the removed mode and the command that migrates this file
    assert.match(result.stderr, /"toolMode": "dynamic".*removed in 0\.10\.0/);
    assert.ok(result.stderr.includes(`mcp-workbench migrate --config ${file} --write`), result.stderr);
    const json = run(['validate', '--config', file, '--json']);
    assert.equal(json.code, 1);
    assert.equal((JSON.parse(json.stdout) as { code: string }).code, 'CONFIG_DYNAMIC_MODE');
  });

  it('without --write prints the diff and the changes, and writes nothing', async () => {
    const result = run(['migrate', '--config', file]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^--- ${file}\\n\\+\\+\\+ ${file} \\(migrated\\)\\n@@ `));
    assert.match(result.stdout, /^-  "toolMode": "dynamic",$/m);
    assert.match(result.stdout, /^-          "transport": "stdio",$/m);
    assert.match(result.stdout, /^\+          "type": "stdio",$/m);
    assert.match(result.stdout, /Changes:\n  - toolMode: removed "toolMode": "dynamic"/);
    assert.match(result.stdout, /open_toolbox \{ "toolbox_name": "dev" \}/);
    assert.match(result.stdout, /Nothing was written\. Run again with --write/);
    assert.equal(await readFile(file, 'utf8'), original);
    assert.deepEqual((await readdir(dir)).sort(), ['workbench-config.json']);
  });

  it('--json describes the same without writing', async () => {
    const result = run(['migrate', '--config', file, '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.equal(report.action, 'migrate');
    assert.equal(report.path, file);
    assert.equal(report.status, 'changed');
    assert.equal(report.written, false);
    assert.deepEqual((report.changes as { path: string }[]).map((c) => c.path), ['toolMode', 'toolboxes.dev.mcpServers.fx']);
    assert.match(report.diff as string, /^-  "toolMode"/m);
    assert.deepEqual(report.variables, { required: [], optional: [], about: {}, unset: [] });
    assert.equal(await readFile(file, 'utf8'), original);
  });

  it('with --write keeps the original as a backup, and the result validates', async () => {
    const result = run(['migrate', '--config', file, '--write']);
    assert.equal(result.code, 0, result.stderr);
    const backups = (await readdir(dir)).filter((f) => /^workbench-config\.json\.bak-\d{8}T\d{6}Z$/.test(f));
    assert.equal(backups.length, 1);
    assert.equal(await readFile(join(dir, backups[0]!), 'utf8'), original);
    assert.match(result.stdout, new RegExp(`Saved ${file}; the original is kept as ${join(dir, backups[0]!)}`));
    const migrated = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    assert.equal('toolMode' in migrated, false);
    assert.equal(migrated._comment, 'written for 0.9');
    const validate = run(['validate', '--config', file]);
    assert.equal(validate.code, 0, validate.stderr);
    assert.match(validate.stdout, /valid \(1 toolbox\(es\), 1 server\(s\)\)/);
  });

  it('a second run says there is nothing to do and writes nothing', async () => {
    const contents = await readFile(file, 'utf8');
    const result = run(['migrate', '--config', file, '--write']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /is already a valid 0\.10 config; nothing to change/);
    assert.equal(await readFile(file, 'utf8'), contents);
    assert.equal((await readdir(dir)).filter((f) => f.includes('.bak-')).length, 1);
  });

  it('the migrated config serves: open_toolbox, then use_tool echo', async () => {
    const { client, close } = await serveFile(file, dir);
    try {
      const listed = await client.listTools();
      assert.deepEqual(listed.tools.map((t) => t.name).sort(), ['open_toolbox', 'use_tool']);
      const opened = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev' } })) as CallToolResult;
      assert.equal(opened.isError, undefined);
      const catalog = opened.structuredContent as { tools: { name: string }[] };
      assert.ok(catalog.tools.some((t) => t.name === 'dev__fx__echo'));
      const echoed = (await client.callTool({
        name: 'use_tool',
        arguments: { toolbox_name: 'dev', tool_name: 'dev__fx__echo', arguments: { text: 'migrated!' } },
      })) as CallToolResult;
      assert.equal(echoed.isError, undefined, textOf(echoed));
      assert.equal(textOf(echoed), 'migrated!');
    } finally {
      await close();
    }
  });
});

/** The text of MIGRATION.md's first fenced block of `lang` after the line `marker` (its examples, run as printed). */
function migrationBlock(marker: string, lang: string): string {
  const text = readFileSync(new URL('../../MIGRATION.md', import.meta.url), 'utf8');
  const after = text.slice(text.indexOf(marker) + marker.length);
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(after);
  assert.ok(text.includes(marker) && block, `MIGRATION.md has no ${lang} block after ${marker}`);
  return block[1]!;
}

describe('MIGRATION.md "From 0.9 dynamic mode to 0.10", followed as written', () => {
  let dir: string;
  let cleanup: (() => Promise<void>) | undefined;
  before(async () => ({ dir, cleanup } = await tempDir('wb-migration-doc-')));
  after(() => cleanup?.());

  it('"Config: before and after": migrate --write turns Before into After, as shown', async () => {
    const file = join(dir, 'workbench-config.json');
    await writeFile(file, migrationBlock('Before (0.9):', 'json'));
    const result = run(['migrate', '--config', file, '--write'], { env: { HOME: dir } });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await readFile(file, 'utf8'), migrationBlock('After (0.10), as `migrate --write` leaves it:', 'json'));
  });

  it('"The error a 0.9 dynamic config now gets" is what validate prints for the fixture', async () => {
    const file = join(dir, 'fixture-config.json');
    await copyFile(fixtureConfig('migrate-0.9-dynamic.json'), file);
    const result = run(['validate', '--config', file], { env: { HOME: dir } });
    assert.equal(result.code, 1, result.stderr);
    const shown = migrationBlock('### The error a 0.9 dynamic config now gets', 'text').replaceAll('/path/workbench-config.json', file);
    const words = (text: string): string => text.replace(/^\S+Z /, '').replace(/\s+/g, ' ').trim();
    assert.equal(words(result.stderr), words(shown));
  });
});

describe('migrate --from: importing other clients\' configs', () => {
  let dir: string;
  let cleanup: (() => Promise<void>) | undefined;
  after(() => cleanup?.());
  before(async () => {
    const temp = await tempDir('wb-import-');
    cleanup = temp.cleanup;
    dir = temp.dir;
  });

  /** PATH with a stand-in `uvx` first (validate only checks that the command is there; nothing runs it). */
  async function pathWithUvx(): Promise<string> {
    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'uvx'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    return `${bin}${delimiter}${process.env.PATH ?? ''}`;
  }

  it('Claude Desktop → a new config that validates', async () => {
    const target = join(dir, 'desktop.json');
    const result = run(['migrate', '--config', target, '--from', 'claude-desktop', fixtureConfig('import-claude-desktop.json'), '--toolbox', 'desktop', '--write']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^--- \/dev\/null$/m);
    assert.match(result.stdout, /new toolbox with 4 server\(s\) from Claude Desktop: filesystem, github, brave-search, sqlite/);
    assert.match(result.stdout, /server "brave\.search" is imported as "brave-search"/);
    assert.match(result.stdout, new RegExp(`Created ${target}\\.`));
    const written = JSON.parse(await readFile(target, 'utf8')) as { $schema: string };
    assert.ok(existsSync(join(dir, written.$schema)), `$schema ${written.$schema} resolves to the shipped schema`);
    // The literal tokens became ${VAR} references: the config is valid once they are set.
    assert.match(result.stdout, /GITHUB_PERSONAL_ACCESS_TOKEN \(not set in this shell\)/);
    // validate looks for each command where the server would start: uvx (the sqlite server's) is not on every machine
    const validate = run(['validate', '--config', target], { env: { PATH: await pathWithUvx(), GITHUB_PERSONAL_ACCESS_TOKEN: 'x', BRAVE_API_KEY: 'y' } });
    assert.equal(validate.code, 0, validate.stderr);
    assert.match(validate.stdout, /valid \(1 toolbox\(es\), 4 server\(s\)\)/);
  });

  it('Claude Code .mcp.json (stdio, http, sse) → validates once its variables are set', async () => {
    const target = join(dir, 'code.json');
    const result = run(['migrate', '--config', target, '--from', 'claude-code', fixtureConfig('import-claude-code.json'), '--toolbox', 'code', '--write', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { written: boolean; created: boolean; variables: { required: string[]; optional: string[]; unset: string[] } };
    assert.equal(report.written, true);
    assert.equal(report.created, true);
    assert.deepEqual(report.variables.required, ['HOME', 'API_KEY', 'INTERNAL_API_KEY']);
    assert.deepEqual(report.variables.unset, ['API_KEY', 'INTERNAL_API_KEY']);
    assert.deepEqual(report.variables.optional, ['API_BASE_URL']);
    const missing = run(['validate', '--config', target]);
    assert.equal(missing.code, 1);
    // the message is the product: it must name every unset variable at once
    assert.match(missing.stderr, /API_KEY, INTERNAL_API_KEY/);
    const missingJson = run(['validate', '--config', target, '--json']);
    assert.equal(missingJson.code, 1);
    assert.equal((JSON.parse(missingJson.stdout) as { code: string }).code, 'ENV_MISSING');
    const validate = run(['validate', '--config', target, '--json'], { env: { API_KEY: 'k', INTERNAL_API_KEY: 'i' } });
    assert.equal(validate.code, 0, validate.stderr);
    const servers = (JSON.parse(validate.stdout) as { toolboxes: { servers: { name: string; type: string }[] }[] }).toolboxes[0]!.servers;
    assert.deepEqual(servers, [
      { name: 'memory', type: 'stdio' },
      { name: 'sentry', type: 'http' },
      { name: 'api-server', type: 'sse' },
      { name: 'internal_tools', type: 'http' },
    ]);
  });

  it('Claude Code ~/.claude.json with --project → that project\'s servers too', async () => {
    const target = join(dir, 'user.json');
    const result = run(['migrate', '--config', target, '--from', 'claude-code', fixtureConfig('import-claude-code-user.json'), '--project', '/home/alice/src/shop', '--toolbox', 'shop', '--write']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /new toolbox with 3 server\(s\) from Claude Code: context7, postgres, playwright/);
    assert.equal(run(['validate', '--config', target]).code, 0);
  });

  it('VS Code .vscode/mcp.json with ${input:…} and ${workspaceFolder} → validates; says which variables to set', async () => {
    const project = join(dir, 'project');
    await mkdir(join(project, '.vscode'), { recursive: true });
    await copyFile(fixtureConfig('import-vscode.json'), join(project, '.vscode', 'mcp.json'));
    const target = join(dir, 'vscode.json');
    // Without a file argument, --from vscode reads ./.vscode/mcp.json.
    const result = run(['migrate', '--config', target, '--from', 'vscode', '--toolbox', 'editor', '--write'], { cwd: project });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /\$\{input:github-token\} \(which VS Code prompted for\) became \$\{GITHUB_TOKEN\}/);
    assert.match(result.stdout, /- GITHUB_TOKEN \(not set in this shell\) — replaces VS Code input "github-token", a password: GitHub Personal Access Token/);
    assert.match(result.stdout, /- PERPLEXITY_KEY \(not set in this shell\)/);
    assert.match(result.stdout, /"envFile" was dropped/);
    const written = await readFile(target, 'utf8');
    assert.ok(written.includes(`"\${WORKSPACE_FOLDER:-${project}}"`));
    assert.ok(written.includes('"Authorization": "Bearer ${GITHUB_TOKEN}"'));
    const validate = run(['validate', '--config', target], { env: { PATH: await pathWithUvx(), GITHUB_TOKEN: 'g', PERPLEXITY_KEY: 'p' } });
    assert.equal(validate.code, 0, validate.stderr);
  });

  it('adds to an existing config, refuses to replace a toolbox, and merges with --merge', async () => {
    const target = join(dir, 'existing.json');
    const fx = fixtureServer();
    const existing = `{\n  "toolboxes": {\n    "code": { "mcpServers": { "memory": { "command": ${JSON.stringify(fx.command)} } } }\n  }\n}\n`;
    await writeFile(target, existing);
    const refused = run(['migrate', '--config', target, '--from', 'claude-code', fixtureConfig('import-claude-code.json'), '--toolbox', 'code', '--write', '--json']);
    assert.equal(refused.code, 2);
    const refusal = failureOf(refused);
    assert.equal(refusal.code, 'USAGE');
    // the message is the product: it must name the toolbox and the option that adds to it
    assert.match(refusal.message, /"code".*--merge/);
    assert.equal(await readFile(target, 'utf8'), existing);

    const added = run(['migrate', '--config', target, '--from', 'claude-desktop', fixtureConfig('import-claude-desktop.json'), '--toolbox', 'desktop']);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /^\+ {4}"code": \{ "mcpServers": \{ "memory": \{ "command": .* \} \} \},$/m);
    assert.match(added.stdout, /^\+ {4}"desktop": \{$/m);

    const merged = run(['migrate', '--config', target, '--from', 'claude-code', fixtureConfig('import-claude-code.json'), '--toolbox', 'code', '--merge', '--write']);
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stdout, /"memory" already exists in toolbox "code" with other settings; the existing entry was kept/);
    assert.match(merged.stdout, /added 3 server\(s\) from Claude Code: sentry, api-server, internal_tools/);
    const document = JSON.parse(await readFile(target, 'utf8')) as { toolboxes: { code: { mcpServers: Record<string, { command?: string }> } } };
    assert.equal(document.toolboxes.code.mcpServers.memory!.command, fx.command);
    assert.equal((await readdir(dir)).filter((f) => f.startsWith('existing.json.bak-')).length, 1);
  });

  it('usage errors exit 2; a missing file exits 1', async () => {
    const target = join(dir, 'usage.json');
    for (const args of [
      ['migrate', '--config', target, '--from', 'claude-desktop', fixtureConfig('import-claude-desktop.json')],
      ['migrate', '--config', target, '--from', 'claude-desktop', fixtureConfig('import-claude-desktop.json'), '--toolbox', 'bad__name'],
      ['migrate', '--config', target, '--from', 'zed', 'x.json', '--toolbox', 'x'],
      ['migrate', '--config', target, 'stray-file.json'],
      ['migrate', '--config', target, '--toolbox', 'x'],
    ]) {
      const result = run(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    }
    const suggestion = failureOf(run(['migrate', '--config', target, '--from', 'claude-desktop', 'x.json', '--toolbox', 'my tools', '--json']));
    assert.equal(suggestion.code, 'USAGE');
    // the message is the product: it must offer a valid name
    assert.match(suggestion.message, /"my-tools"/);
    const missing = run(['migrate', '--config', join(dir, 'nope.json'), '--json']);
    assert.equal(missing.code, 1);
    assert.equal(failureOf(missing).code, 'CONFIG_NOT_FOUND');
    const nope = join(dir, 'nope.json');
    const missingClient = run(['migrate', '--config', target, '--from', 'claude-desktop', nope, '--toolbox', 'x', '--json']);
    assert.equal(missingClient.code, 1);
    assert.equal(failureOf(missingClient).code, 'CONFIG_NOT_FOUND');
    // the message is the product: it must name the path it looked at
    assert.ok(failureOf(missingClient).message.includes(nope), missingClient.stdout);
    assert.equal(existsSync(target), false);
  });

  it('a config it cannot fix: exit 1, the remaining problems, nothing written', async () => {
    const target = join(dir, 'broken.json');
    const text = readFileSync(fixtureConfig('many-problems.json'), 'utf8');
    await writeFile(target, text);
    const result = run(['migrate', '--config', target, '--write', '--json']);
    assert.equal(result.code, 1);
    const failed = failureOf(result);
    assert.equal(failed.code, 'CONFIG_INVALID');
    assert.ok(failed.details.some((d) => d.includes('timeoutMs: must be a positive integer')), result.stdout);
    assert.equal(await readFile(target, 'utf8'), text);
    assert.deepEqual((await readdir(dir)).filter((f) => f.startsWith('broken.json.bak')), []);
  });
});

describe('migrate: entries a workbench config comments out with "_" or "$"', () => {
  let dir: string;
  let cleanup: (() => Promise<void>) | undefined;
  after(() => cleanup?.());
  before(async () => {
    const temp = await tempDir('wb-migrate-parked-');
    cleanup = temp.cleanup;
    dir = temp.dir;
  });

  it('stay parked under _parkedToolboxes / _parkedServers, are never revived, and the notes name them', async () => {
    const fx = fixtureServer();
    const file = join(dir, 'workbench-config.json');
    const parkedServer = { command: 'node', args: ['old.js'] };
    await writeFile(
      file,
      `${JSON.stringify(
        {
          toolMode: 'dynamic',
          toolboxes: {
            dev: { mcpServers: { fx: { transport: 'stdio', command: fx.command, args: fx.args }, _old: parkedServer, $off: { command: 'gone' } } },
            _retired: { mcpServers: { a: { command: 'node' } } },
            'my tools': { mcpServers: { b: { command: fx.command, args: fx.args }, _spare: { command: 'spare' } } },
          },
        },
        null,
        2,
      )}\n`,
    );
    const result = run(['migrate', '--config', file, '--write', '--json']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const report = JSON.parse(result.stdout) as { notes: string[]; changes: { path: string; message: string }[] };
    const written = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown> & {
      toolboxes: Record<string, { mcpServers: Record<string, unknown>; _parkedServers?: Record<string, unknown> }>;
    };
    assert.deepEqual(Object.keys(written.toolboxes), ['dev', 'my-tools'], 'the parked toolbox is not a live one');
    assert.deepEqual(Object.keys(written.toolboxes.dev!.mcpServers), ['fx']);
    assert.deepEqual(written.toolboxes.dev!._parkedServers, { _old: parkedServer, $off: { command: 'gone' } });
    assert.deepEqual(Object.keys(written.toolboxes['my-tools']!.mcpServers), ['b']);
    assert.deepEqual(written.toolboxes['my-tools']!._parkedServers, { _spare: { command: 'spare' } });
    assert.deepEqual(written._parkedToolboxes, { _retired: { mcpServers: { a: { command: 'node' } } } });
    const notes = report.notes.join('\n');
    assert.match(notes, /toolbox "_retired" .*parked under "_parkedToolboxes"/);
    assert.match(notes, /server "_old" of toolbox "dev" .*parked under "toolboxes\.dev\._parkedServers"/);
    assert.match(notes, /server "\$off" of toolbox "dev"/);
    assert.match(notes, /server "_spare" of toolbox "my tools"/);
    assert.doesNotMatch(notes + report.changes.map((c) => c.message).join('\n'), /"_old" renamed|"_retired" renamed|__old__|retired__/);
    const validate = run(['validate', '--config', file]);
    assert.equal(validate.code, 0, validate.stderr);
    assert.match(validate.stdout, /valid \(2 toolbox\(es\), 2 server\(s\)\)/);
    const again = run(['migrate', '--config', file, '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { status: string }).status, 'unchanged', 'parked entries stay parked on the next run');
  });

  it('a Claude Desktop source: a server named "_…" is a real server and is imported', async () => {
    const source = join(dir, 'claude_desktop_config.json');
    await writeFile(source, JSON.stringify({ mcpServers: { _helper: { command: 'node', args: ['helper.js'] }, fs: { command: 'node' } } }));
    const target = join(dir, 'desktop.json');
    const result = run(['migrate', '--config', target, '--from', 'claude-desktop', source, '--toolbox', 'desktop', '--json']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const report = JSON.parse(result.stdout) as { notes: string[]; diff: string };
    assert.match(report.notes.join('\n'), /server "_helper" is imported as "helper"/);
    assert.doesNotMatch(report.diff, /_parked/);
  });
});
