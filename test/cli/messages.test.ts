import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dirPerTest, runCliAsync } from '../helpers/cli-run.js';
import { errorLine } from '../helpers/log-lines.js';

/** Error messages say what is wrong as it is, first (README "Configuration": one bad part fails only itself). */

const own = dirPerTest('wb-messages-');

const run = (args: string[], extra: Record<string, string> = {}) =>
  runCliAsync(args, { HOME: join(own.dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache'), WORKBENCH_STATE_FILE: join(own.dir, 'state.json'), ...extra }, { cwd: own.dir });

describe('messages', () => {
  it('a config that is JSON but not an object says what the file must hold, in validate, doctor and serve alike', async () => {
    for (const [file, text] of [['array.json', '[]'], ['string.json', '"x"']] as const) {
      const config = join(own.dir, file);
      await writeFile(config, text);
      for (const command of [['validate'], ['doctor'], ['serve']]) {
        const result = await run([...command, '--config', config]);
        assert.equal(result.code, 1, `${command[0]} ${text}: ${result.stderr}`);
        assert.match(result.stderr + result.stdout, /\(root\): must be a JSON object with "toolboxes".*README "Configuration"/, `${command[0]} ${text}`);
      }
    }
  });

  it('a command made empty by ${VAR:-} says whether VAR is unset or set but empty, in one grammatical line', async () => {
    const config = join(own.dir, 'e.json');
    await writeFile(config, JSON.stringify({ toolboxes: { dev: { mcpServers: { s: { command: '${EMPTYCMD:-}' }, t: { command: 'node' } } } } }));
    const unset = await run(['validate', '--config', config]);
    assert.equal(unset.code, 1, unset.stderr);
    assert.match(unset.stderr, /has 1 problem that keeps a server from starting/);
    assert.match(unset.stderr, /EMPTYCMD is not set and its default is empty \(\$\{EMPTYCMD:-\}\)/);
    assert.doesNotMatch(unset.stderr, /set but empty/);
    const empty = await run(['validate', '--config', config], { EMPTYCMD: '' });
    assert.match(empty.stderr, /EMPTYCMD is set but empty and its default is empty/);
  });

  it('migrate tells that canonical tool names change for each renamed server, and not that they are unchanged', async () => {
    const config = join(own.dir, 'ren.json');
    await writeFile(config, JSON.stringify({ toolMode: 'dynamic', toolboxes: { dev: { mcpServers: { 'file.system': { command: 'node' }, my__mem: { command: 'node' } } } } }));
    const result = await run(['migrate', '--config', config]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /tools of server "file\.system" in toolbox "dev" are now named dev__file-system__\{tool\}/);
    assert.match(result.stdout, /tools of server "my__mem" in toolbox "dev" are now named dev__my_mem__\{tool\}/);
    assert.doesNotMatch(result.stdout, /Canonical names are unchanged\./);
  });

  it('migrate --from claude-code --project with an unknown project leads with that cause', async () => {
    await writeFile(join(own.dir, 'home', '.claude.json'), JSON.stringify({ projects: { '/x': { mcpServers: { b: { command: 'node' } } } } }));
    const result = await run(['migrate', '--from', 'claude-code', '--project', '/nowhere', '--toolbox', 't', '--config', join(own.dir, 'n.json')], { WORKBENCH_LOG_FORMAT: 'json' });
    assert.equal(result.code, 1, result.stderr);
    assert.match(errorLine(result.stderr).message, /^\S+\.claude\.json has no project "\/nowhere"\. Projects with servers: \/x\./);
  });
});
