import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { resolveToolsets, sessionToolsetFilter, patternWarnings } from '../../src/catalog/toolsets.js';
import { WorkbenchError } from '../../src/errors.js';

const config = parseConfig(
  {
    toolboxes: {
      dev: { mcpServers: { fs: { command: 'x' }, mem: { command: 'x' } } },
      web: { mcpServers: { fetch: { command: 'x' } } },
    },
    toolsets: {
      one: { tools: ['dev__fs__read_*'] },
      mixed: { tools: ['dev__mem__search_nodes', 'web__*', 'dev__fss__read', 'nowhere__x__y'] },
      wide: { tools: ['*__read_*'] },
    },
  },
  '/cfg.json',
  {},
);

describe('resolveToolsets', () => {
  const toolsets = resolveToolsets(config);

  it('reaches only the servers a pattern\'s literal start allows', () => {
    assert.deepEqual(toolsets.get('one')!.servers, [{ toolbox: 'dev', server: 'fs' }]);
    assert.deepEqual(toolsets.get('mixed')!.servers, [
      { toolbox: 'dev', server: 'mem' },
      { toolbox: 'web', server: 'fetch' },
    ]);
    assert.equal(toolsets.get('wide')!.servers.length, 3, 'a leading * can reach every server');
  });

  it('names the patterns that can reach no configured server, as warnings too', () => {
    assert.deepEqual(toolsets.get('mixed')!.unreachable, ['dev__fss__read', 'nowhere__x__y']);
    assert.deepEqual(toolsets.get('one')!.unreachable, []);
    const warnings = patternWarnings(config);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /toolset "mixed": "dev__fss__read"/);
    assert.match(warnings[1]!, /toolset "mixed": "nowhere__x__y"/);
  });

  it('matches canonical names by its globs', () => {
    const one = toolsets.get('one')!;
    assert.equal(one.includes('dev__fs__read_file'), true);
    assert.equal(one.includes('dev__fs__write_file'), false);
    assert.equal(one.includes('dev__mem__read_graph'), false);
  });
});

describe('sessionToolsetFilter', () => {
  it('refuses a --toolset name the config does not define, naming it', () => {
    assert.throws(
      () => sessionToolsetFilter(config, ['one', 'nosuch']),
      (error: unknown) => error instanceof WorkbenchError && error.code === 'CONFIG_INVALID' && /"nosuch"/.test(error.message),
    );
    assert.deepEqual(sessionToolsetFilter(config, ['one']).map((t) => t.name), ['one']);
  });
});
