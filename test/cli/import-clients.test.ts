import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { parse } from 'jsonc-parser';
import { paths, runCli, tempDir } from '../helpers/workbench-process.js';

/**
 * `migrate --from CLIENT`: real-shaped config files of each client (comments, trailing commas, url-only entries, the
 * workbench's own entry, a literal token), read from where each client keeps them under a temp HOME, through the
 * built CLI (README "From other clients' configs", MIGRATION.md).
 */

const TOKEN = 'ghp_literalSecretValue123456';

/** The workbench's own entry as users register it in their clients. */
const SELF_ENTRIES = {
  npx: `"workbench": { "command": "npx", "args": ["-y", "mcp-workbench", "--config", "/home/me/workbench-config.json"] }`,
  node: () => `"wb-local": { "command": "node", "args": [${JSON.stringify(paths.cli)}, "serve"] }`,
};

interface Home {
  home: string;
  project: string;
  target: string;
  run(args: string[], env?: Record<string, string>): ReturnType<typeof runCli>;
  write(path: string, text: string): Promise<string>;
}

let home: Home;
let cleanup: (() => Promise<void>) | undefined;
beforeEach(async () => {
  const temp = await tempDir('wb-import-clients-');
  cleanup = temp.cleanup;
  const project = join(temp.dir, 'code', 'app');
  await mkdir(project, { recursive: true });
  home = {
    home: temp.dir,
    project,
    target: join(temp.dir, 'workbench-config.json'),
    run: (args, env = {}) => runCli(['migrate', '--config', join(temp.dir, 'workbench-config.json'), ...args], { cwd: project, env: { HOME: temp.dir, ...env } }),
    write: async (path, text) => {
      const full = join(temp.dir, path);
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, text);
      return full;
    },
  };
});
afterEach(() => cleanup?.());

function written(text: string): { toolboxes: Record<string, { mcpServers: Record<string, Record<string, unknown>> }> } {
  return parse(text) as { toolboxes: Record<string, { mcpServers: Record<string, Record<string, unknown>> }> };
}

/** Exit 0, the secret never printed, the workbench's own entry skipped and said so. */
function checkDryRun(result: ReturnType<typeof runCli>, selfName: string): void {
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stdout + result.stderr, new RegExp(TOKEN));
  assert.match(result.stdout, new RegExp(`server "${selfName}" was skipped: it runs the workbench itself`));
  assert.match(result.stdout, /Nothing was written/);
}

describe('migrate --from: each client\'s files as they are found', () => {
  it('Claude Desktop (default location): JSONC, a literal token becomes ${VAR}, the workbench entry is skipped', async () => {
    await home.write(
      '.config/Claude/claude_desktop_config.json',
      `{
  // added by hand
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "${TOKEN}", },
    },
    ${SELF_ENTRIES.npx},
  },
}
`,
    );
    const dry = home.run(['--from', 'claude-desktop', '--toolbox', 'desk']);
    checkDryRun(dry, 'workbench');
    assert.match(dry.stdout, /"GITHUB_PERSONAL_ACCESS_TOKEN": "\$\{GITHUB_PERSONAL_ACCESS_TOKEN\}"/);
    assert.match(dry.stdout, /- GITHUB_PERSONAL_ACCESS_TOKEN \(not set in this shell\)/);
    assert.deepEqual(await readdir(home.home).then((f) => f.filter((n) => n.startsWith('workbench-config'))), []);

    const wrote = home.run(['--from', 'claude-desktop', '--toolbox', 'desk', '--write']);
    assert.equal(wrote.code, 0, wrote.stderr);
    const config = await readFile(home.target, 'utf8');
    assert.doesNotMatch(config, new RegExp(TOKEN));
    assert.deepEqual(Object.keys(written(config).toolboxes.desk!.mcpServers), ['github']);
    const validate = runCli(['validate', '--config', home.target], { env: { HOME: home.home, GITHUB_PERSONAL_ACCESS_TOKEN: 'x' } });
    assert.equal(validate.code, 0, validate.stderr);
  });

  it('Claude Code ~/.claude.json: user scope plus one project\'s servers, url-only entries typed', async () => {
    await home.write(
      '.claude.json',
      JSON.stringify({
        numStartups: 12,
        mcpServers: {
          memory: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: {} },
          workbench: { type: 'stdio', command: 'mcp-workbench', args: ['--config', '/home/me/wb.json'] },
        },
        projects: {
          [home.project]: {
            allowedTools: [],
            mcpServers: {
              docs: { url: 'https://docs.example.com/sse' },
              api: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: `Bearer ${TOKEN}` } },
            },
          },
          '/elsewhere': { mcpServers: { other: { command: 'x' } } },
        },
      }),
    );
    const dry = home.run(['--from', 'claude-code', '--project', home.project, '--toolbox', 'app']);
    checkDryRun(dry, 'workbench');
    const wrote = home.run(['--from', 'claude-code', '--project', home.project, '--toolbox', 'app', '--write']);
    assert.equal(wrote.code, 0, wrote.stderr);
    const servers = written(await readFile(home.target, 'utf8')).toolboxes.app!.mcpServers;
    assert.deepEqual(Object.keys(servers), ['memory', 'docs', 'api']);
    assert.deepEqual(servers.docs, { type: 'sse', url: 'https://docs.example.com/sse' });
    assert.deepEqual(servers.api!.headers, { Authorization: 'Bearer ${API_TOKEN}' });
  });

  it('Cursor: the project .cursor/mcp.json first, else ~/.cursor/mcp.json; ${env:X} and url-only entries', async () => {
    const cursorFile = `{
  "mcpServers": {
    // remote servers as Cursor writes them: no "type"
    "linear": { "url": "https://mcp.linear.app/sse" },
    "notion": { "url": "https://mcp.notion.com/mcp", "headers": { "Authorization": "Bearer \${env:NOTION_TOKEN}" } },
    "stripe": { "command": "npx", "args": ["-y", "@stripe/mcp"], "env": { "STRIPE_SECRET_KEY": "${TOKEN}" } },
    ${SELF_ENTRIES.node()},
  },
}
`;
    await home.write('.cursor/mcp.json', cursorFile);
    const dry = home.run(['--from', 'cursor', '--toolbox', 'cursor']);
    checkDryRun(dry, 'wb-local');
    assert.match(dry.stdout, new RegExp(`servers from ${join(home.home, '.cursor', 'mcp.json')}`));

    await home.write('code/app/.cursor/mcp.json', cursorFile.replace('"stripe"', '"stripe-project"'));
    const wrote = home.run(['--from', 'cursor', '--toolbox', 'cursor', '--write']);
    assert.equal(wrote.code, 0, wrote.stderr);
    assert.match(wrote.stdout, new RegExp(`servers from ${join(home.project, '.cursor', 'mcp.json')}`));
    const servers = written(await readFile(home.target, 'utf8')).toolboxes.cursor!.mcpServers;
    assert.deepEqual(Object.keys(servers), ['linear', 'notion', 'stripe-project']);
    assert.deepEqual(servers.linear, { type: 'sse', url: 'https://mcp.linear.app/sse' });
    assert.deepEqual(servers.notion, { type: 'http', url: 'https://mcp.notion.com/mcp', headers: { Authorization: 'Bearer ${NOTION_TOKEN}' } });
    assert.deepEqual(servers['stripe-project']!.env, { STRIPE_SECRET_KEY: '${STRIPE_SECRET_KEY}' });
  });

  it('VS Code: .vscode/mcp.json "servers" and settings.json "mcp.servers", both JSONC', async () => {
    const mcpJson = await home.write(
      'code/app/.vscode/mcp.json',
      `{
  "inputs": [{ "type": "promptString", "id": "gh", "password": true, },],
  "servers": {
    "github": { "url": "https://api.githubcopilot.com/mcp/", "headers": { "Authorization": "Bearer \${input:gh}" } },
    /* local */
    "fs": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "\${workspaceFolder}"] },
    ${SELF_ENTRIES.npx},
  },
}
`,
    );
    const dry = home.run(['--from', 'vscode', '--toolbox', 'editor']);
    checkDryRun(dry, 'workbench');
    assert.match(dry.stdout, new RegExp(`servers from ${mcpJson}`));
    assert.match(dry.stdout, /"Authorization": "Bearer \$\{GH\}"/);

    const settings = await home.write(
      '.config/Code/User/settings.json',
      `{
  "editor.tabSize": 2, // mine
  "mcp": {
    "servers": {
      "search": { "type": "http", "url": "https://search.example.com/mcp", "headers": { "X-API-Key": "${TOKEN}" } },
      ${SELF_ENTRIES.npx},
    },
  },
}
`,
    );
    const fromSettings = home.run(['--from', 'vscode', settings, '--toolbox', 'user']);
    checkDryRun(fromSettings, 'workbench');
    assert.match(fromSettings.stdout, /"X-API-Key": "\$\{SEARCH_X_API_KEY\}"/);
  });

  it('Windsurf: serverUrl entries and the default ~/.codeium/windsurf/mcp_config.json', async () => {
    await home.write(
      '.codeium/windsurf/mcp_config.json',
      `{
  "mcpServers": {
    "figma": { "serverUrl": "https://figma.example.com/sse", },
    "brave": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-brave-search"], "env": { "BRAVE_API_KEY": "${TOKEN}" } },
    "off": { "command": "npx", "args": ["x"], "disabled": true },
    ${SELF_ENTRIES.npx}
  }
}
`,
    );
    const dry = home.run(['--from', 'windsurf', '--toolbox', 'surf']);
    checkDryRun(dry, 'workbench');
    assert.match(dry.stdout, /"off" was skipped: it is marked "disabled": true/);
    const wrote = home.run(['--from', 'windsurf', '--toolbox', 'surf', '--write', '--json']);
    assert.equal(wrote.code, 0, wrote.stderr);
    assert.doesNotMatch(wrote.stdout, new RegExp(TOKEN));
    const servers = written(await readFile(home.target, 'utf8')).toolboxes.surf!.mcpServers;
    assert.deepEqual(servers.figma, { type: 'sse', url: 'https://figma.example.com/sse' });
    assert.deepEqual(servers.brave!.env, { BRAVE_API_KEY: '${BRAVE_API_KEY}' });
  });

  it('a 0.9 workbench config: one toolbox\'s servers, "transport" and timeouts carried over', async () => {
    const old = await home.write(
      'old/workbench-config.json',
      JSON.stringify({
        toolMode: 'dynamic',
        toolboxes: {
          dev: { mcpServers: { mem: { transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], timeoutMs: 5000 } } },
          web: { mcpServers: { api: { transport: 'http', url: 'https://x.example.com/mcp' } } },
        },
      }),
    );
    const ambiguous = home.run(['--from', 'workbench', old, '--toolbox', 'tools']);
    assert.equal(ambiguous.code, 2);
    const wrote = home.run(['--from', 'workbench', old, '--toolbox', 'dev', '--write']);
    assert.equal(wrote.code, 0, wrote.stderr);
    const servers = written(await readFile(home.target, 'utf8')).toolboxes.dev!.mcpServers;
    assert.deepEqual(servers.mem, { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], timeoutMs: 5000 });
  });

  it('--write into an existing JSONC config keeps its comments, backs it up, and never prints a secret already in it', async () => {
    const existing = `{
  // my workbench
  "toolboxes": {
    "keep": {
      "mcpServers": {
        "remote": { "type": "http", "url": "https://k.example.com/mcp", "headers": { "Authorization": "Bearer ${TOKEN}" } }, // mine
      },
    },
  },
}
`;
    await writeFile(home.target, existing);
    await home.write('.cursor/mcp.json', '{ "mcpServers": { "docs": { "url": "https://docs.example.com/mcp" } } }');
    const wrote = home.run(['--from', 'cursor', '--toolbox', 'cursor', '--write']);
    assert.equal(wrote.code, 0, wrote.stderr);
    assert.doesNotMatch(wrote.stdout, new RegExp(TOKEN));
    const after = await readFile(home.target, 'utf8');
    assert.match(after, /\/\/ my workbench/);
    assert.match(after, /\/\/ mine/);
    const backups = (await readdir(home.home)).filter((f) => f.startsWith('workbench-config.json.bak-'));
    assert.equal(backups.length, 1);
    assert.equal(await readFile(join(home.home, backups[0]!), 'utf8'), existing);
    assert.deepEqual(Object.keys(written(after).toolboxes), ['keep', 'cursor']);
  });

  it('a server name written twice in the client\'s file: the last one is imported, as the client reads it, and said so', async () => {
    const file = await home.write('desktop-twice.json', `{
  "mcpServers": {
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
    "fs": { "command": "npx", "args": ["-y", "an-old-filesystem-server"] },
    "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"] }
  }
}`);
    const result = home.run(['--from', 'claude-desktop', file, '--toolbox', 'desk', '--write']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /mcpServers\.fs is written more than once in .*desktop-twice\.json; the last one is imported, as Claude Desktop itself reads it/);
    const json = JSON.parse(home.run(['--from', 'claude-desktop', file, '--toolbox', 'desk2', '--json']).stdout) as { notes: string[] };
    assert.ok(json.notes.some((n) => n.startsWith('mcpServers.fs is written more than once')), json.notes.join('\n'));
    const servers = written(await readFile(home.target, 'utf8')).toolboxes.desk!.mcpServers;
    assert.deepEqual(Object.keys(servers), ['memory', 'fs']);
    assert.deepEqual(servers.fs!.args, ['-y', '@modelcontextprotocol/server-filesystem', '/srv']);
  });

  it('a command or cwd this machine does not have is named in the notes, server by server (validate reports it too)', async () => {
    const file = await home.write('desktop-elsewhere.json', JSON.stringify({
      mcpServers: {
        py: { command: 'uvx-not-installed-here', args: ['mcp-server-fetch'] },
        ok: { command: 'node', args: ['server.js'] },
        away: { command: 'node', cwd: '/no/such/folder/here' },
      },
    }));
    const result = home.run(['--from', 'claude-desktop', file, '--toolbox', 'far', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const notes = (JSON.parse(result.stdout) as { notes: string[] }).notes;
    assert.ok(notes.some((n) => /^far\/py: toolboxes\.far\.mcpServers\.py\.command: "uvx-not-installed-here" was not found on the PATH/.test(n)), notes.join('\n'));
    assert.ok(notes.some((n) => /^far\/away: .*cwd: "\/no\/such\/folder\/here" does not exist/.test(n)), notes.join('\n'));
    assert.ok(!notes.some((n) => n.startsWith('far/ok:')), notes.join('\n'));
  });
});
