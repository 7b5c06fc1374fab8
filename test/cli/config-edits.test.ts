import assert from 'node:assert/strict';
import { lstat, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dirPerTest, runCliAsync } from '../helpers/cli-run.js';

/**
 * `server add`, `server remove` and `migrate --write` edit the user's config in place (README "Command line", Setting
 * up; MIGRATION.md): what the user wrote — comments, keys written twice — is never dropped without being asked.
 */

const own = dirPerTest('wb-config-edits-');

const run = (args: string[]) =>
  runCliAsync(args, { HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache'), WORKBENCH_STATE_FILE: join(own.dir, 'state.json') }, { cwd: own.dir });

/** Writes `name` in the test's own.dir and returns its path. */
async function file(name: string, text: string): Promise<string> {
  const path = join(own.dir, name);
  await writeFile(path, text);
  return path;
}

describe('a config with a key written twice is not edited', () => {
  const twice = `{
  // Work laptop config -- do not lose
  "toolboxes": {
    "dev": { "mcpServers": { "github": { "command": "npx", "args": ["-y", "server-github"] } } },
    "dev": { "mcpServers": { "memory": { "command": "npx" }, "memory": { "command": "node" } } }
  }
}
`;

  it('server add, server remove and migrate --write refuse it, name every duplicate and write nothing', async () => {
    const config = await file('wb.json', twice);
    const before = await readdir(own.dir);
    for (const args of [
      ['server', 'add', 'dev', 'fetch', '--config', config, '--', 'uvx', 'mcp-server-fetch'],
      ['server', 'add', 'other', 'fetch', '--config', config, '--', 'uvx', 'mcp-server-fetch'],
      ['server', 'remove', 'dev', 'memory', '--config', config],
      ['migrate', '--config', config, '--write'],
    ]) {
      const result = await run(args);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /written more than once/, args.join(' '));
      assert.match(result.stderr, /^ {2}- toolboxes\.dev: /m, `${args.join(' ')}: names the toolbox written twice`);
      assert.match(result.stderr, /^ {2}- toolboxes\.dev\.mcpServers\.memory: /m, `${args.join(' ')}: and the server`);
      assert.match(result.stderr, /nothing was written/, args.join(' '));
      assert.equal(await readFile(config, 'utf8'), twice, `${args.join(' ')}: the file is as it was`);
      assert.deepEqual(await readdir(own.dir), before, `${args.join(' ')}: no backup, no temp file`);
    }
  });

  it('a 0.9 config with a toolbox written twice is not migrated into one that fails validate', async () => {
    const text = '{\n  "toolMode": "dynamic",\n  "toolboxes": {\n    "dev": { "mcpServers": { "important": { "command": "node" } } },\n    "dev": { "mcpServers": { "mem": { "command": "node" } } }\n  }\n}\n';
    const config = await file('dup.json', text);
    const migrated = await run(['migrate', '--config', config, '--write']);
    assert.equal(migrated.code, 1, migrated.stderr);
    assert.equal(await readFile(config, 'utf8'), text);
    assert.match(migrated.stderr, /toolboxes\.dev: /);
  });
});

describe('removing a member keeps what is around it', () => {
  it('server remove of a toolbox\'s only server written with a trailing comma removes its line and nothing else', async () => {
    const text = `{
  // top comment: do not lose
  "toolboxes": {
    "web": { "mcpServers": { "fetch": { "command": "uvx" } } }, // web stuff
    "dev": { "mcpServers": {
      "mem": { "command": "node" },
    } }
  }
}
`;
    const config = await file('rm.json', text);
    const removed = await run(['server', 'remove', 'dev', 'mem', '--config', config]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(await readFile(config, 'utf8'), text.replace('      "mem": { "command": "node" },\n', ''));
  });

  it('migrate --write keeps a comment written above a first-key "toolMode" (and one on a line of its own after it)', async () => {
    const text = `{
  // Config for project X, see wiki page Y
  "toolMode": "dynamic", // removed with its line
  // the toolboxes
  "toolboxes": { "dev": { "mcpServers": { "m": { "command": "node" } } } }
}
`;
    const config = await file('old.json', text);
    const migrated = await run(['migrate', '--config', config, '--write']);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.equal(await readFile(config, 'utf8'), text.replace('  "toolMode": "dynamic", // removed with its line\n', ''));
    assert.equal((await run(['validate', '--config', config])).code, 0);
  });
});

describe('adding a member keeps the comments where they were', () => {
  const withTail = (tail: string): string => `{
  "toolboxes": {
    "dev": {
      "mcpServers": {
        "a": { "command": "node" }${tail}
        // parked: b, until the VPN works
      }
    }
  }
}
`;
  const added = (tail: string, comma = ''): string => `{
  "toolboxes": {
    "dev": {
      "mcpServers": {
        "a": { "command": "node" },${tail}
        "fetch": {
          "command": "uvx",
          "args": [
            "mcp-server-fetch"
          ]
        }${comma}
        // parked: b, until the VPN works
      }
    }
  }
}
`;

  it('server add after a last server with a comment on its line: the comment stays on that server\'s line', async () => {
    for (const [tail, comma] of [[' // the first one', ''], [' /* the first one */', ''], [', // the first one', ','], [',', ',']] as const) {
      const config = await file('tail.json', withTail(tail));
      const result = await run(['server', 'add', 'dev', 'fetch', '--config', config, '--', 'uvx', 'mcp-server-fetch']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(await readFile(config, 'utf8'), added(tail.replace(/^,/, ''), comma), `tail ${JSON.stringify(tail)}`);
    }
  });

  it('server add after a last server without one: only the new lines are added', async () => {
    const config = await file('plain.json', withTail(''));
    const result = await run(['server', 'add', 'dev', 'fetch', '--config', config, '--', 'uvx', 'mcp-server-fetch']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await readFile(config, 'utf8'), added(''));
  });
});

describe('commands that edit one config at once take turns', () => {
  it('six `server add` at once: each that says it added its server did, and none is lost', async () => {
    const config = await file('workbench-config.json', '{\n  // mine\n  "toolboxes": { "dev": { "mcpServers": {} } }\n}\n');
    // `node` is on the PATH wherever the tests run: each entry passes validate as written.
    const names = ['s1', 's2', 's3', 's4', 's5', 's6'];
    const runs = await Promise.all(names.map((name) => run(['server', 'add', 'dev', name, '--config', config, '--', 'node', 'server.js'])));
    const text = await readFile(config, 'utf8');
    for (const [i, result] of runs.entries()) {
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.match(text, new RegExp(`"${names[i]}"`), `${names[i]} was reported added but is not in the file:\n${text}`);
    }
    assert.match(text, /\/\/ mine/);
    // The lock is gone once they are done.
    assert.deepEqual((await readdir(own.dir)).filter((entry) => entry.endsWith('.lock')), []);
  });
});

describe('init where the config is a symbolic link to a file that is gone', () => {
  it('says it is a dangling link and where it points (not "created by someone else"), and writes nothing', async () => {
    const link = join(own.dir, 'workbench-config.json');
    await symlink(join(own.dir, 'dotfiles', 'workbench-config.json'), link);
    for (const args of [['init', '--config', link], ['init', '--config', link, '--force']]) {
      const result = await run(args);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(result.stderr, /is a symbolic link to .*dotfiles\/workbench-config\.json, which does not exist; restore what it points to, or remove the link/);
      assert.doesNotMatch(result.stderr, /someone else/);
    }
    assert.equal((await lstat(link)).isSymbolicLink(), true);
  });
});
