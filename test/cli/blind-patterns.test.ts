import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixtureServer, runCli } from '../helpers/workbench-process.js';

/**
 * A name to hide that can match no tool (a bare tool name, a typo in the toolbox or server) would leave the tool
 * callable while the user believes it hidden (README "Enabled and disabled tools").
 */
describe('disabled-tools patterns that can hide nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-blind-'));
  const config = join(dir, 'wb.json');
  const env = { HOME: join(dir, 'home'), WORKBENCH_STATE_FILE: join(dir, 'state.json') };
  before(() => writeFile(config, JSON.stringify({ toolboxes: { dev: { mcpServers: { fx: fixtureServer() } } } })));
  after(() => rm(dir, { recursive: true, force: true }));

  it('serve --disabled-tools with a bare tool name is refused, naming the canonical form', () => {
    const result = runCli(['--config', config, '--disabled-tools', 'echo'], { env });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--disabled-tools would hide nothing with "echo" names no configured toolbox and server/);
    assert.match(result.stderr, /"\*__\*__echo" means that tool of every server/);
    assert.match(result.stderr, /Toolboxes in .*wb\.json: dev/);
  });

  it('a typo in the server name is refused too, by tools search and tools call as well', () => {
    for (const args of [['serve', '--http', '127.0.0.1:0'], ['tools', 'search', 'echo'], ['tools', 'call', 'dev', 'echo']]) {
      const result = runCli([...args, '--config', config, '--disabled-tools', 'dev__fxx__echo,dev__fx__add'], { env });
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /"dev__fxx__echo" names no configured toolbox and server/);
      assert.doesNotMatch(result.stderr, /"dev__fx__add"/, 'a reachable pattern is not named');
    }
  });

  it('reachable names and globs are accepted', () => {
    const result = runCli(['tools', 'search', 'echo', '--config', config, '--disabled-tools', 'dev__fx__add,*__*__nothing,dev__*'], { env });
    assert.equal(result.code, 0, result.stderr);
  });

  it('a project file entry that can hide nothing is warned about (validate and serve)', async () => {
    const project = join(dir, 'project');
    await mkdir(project, { recursive: true });
    await writeFile(join(project, '.mcp-workbench.json'), JSON.stringify({ disabledTools: ['echo', 'dev__fx__add'] }));
    const validate = runCli(['validate', '--config', config, '--project', project], { env });
    assert.equal(validate.code, 0, validate.stderr);
    assert.match(validate.stderr, /\.mcp-workbench\.json: disabledTools "echo" names no configured toolbox and server/);
    const serve = runCli(['--config', config, '--project', project], { env });
    assert.match(serve.stderr, /disabledTools "echo" names no configured toolbox and server/);
    assert.doesNotMatch(serve.stderr, /"dev__fx__add" names/);
  });
});
