import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { WorkbenchError } from '../../src/errors.js';

const SOURCE = '/home/ada/workbench-config.json';

function problems(raw: unknown): readonly string[] {
  try {
    parseConfig(raw, SOURCE, {});
  } catch (error) {
    assert.ok(error instanceof WorkbenchError && error.code === 'CONFIG_INVALID', String(error));
    return error.details;
  }
  assert.fail('expected CONFIG_INVALID');
}

describe('toolsets and toolOverrides in the config', () => {
  it('normalises toolsets and overrides on servers and toolboxes', () => {
    const config = parseConfig(
      {
        toolboxes: {
          dev: {
            mcpServers: { db: { command: 'db-mcp', toolOverrides: { 'drop_*': { annotations: { destructiveHint: true } } } } },
            toolOverrides: { dev__db__query: { title: 'Query', description: 'Run SQL.', descriptionSuffix: 'Staging only.' } },
          },
        },
        toolsets: { quick: { description: 'Quick tasks', tools: ['dev__db__query'] } },
      },
      SOURCE,
      {},
    );
    assert.deepEqual(config.toolsets, [{ name: 'quick', description: 'Quick tasks', tools: ['dev__db__query'], origin: 'config' }]);
    assert.deepEqual(config.toolboxes[0]!.toolOverrides, [
      { pattern: 'dev__db__query', title: 'Query', description: 'Run SQL.', descriptionSuffix: 'Staging only.' },
    ]);
    assert.deepEqual(config.toolboxes[0]!.servers[0]!.toolOverrides, [{ pattern: 'drop_*', annotations: { destructiveHint: true } }]);
  });

  it('refuses a name that is both a toolbox and a toolset, bad toolset names, and typos with suggestions', () => {
    const found = problems({
      toolboxes: { dev: { mcpServers: {} } },
      toolsets: {
        dev: { tools: ['dev__x__y'] },
        _bad: { tools: [] },
        quick: { tool: ['x'] },
      },
    });
    const text = found.join('\n');
    assert.match(text, /^toolsets\.dev: toolset "dev" has the name of a toolbox/m);
    assert.match(text, /^toolsets\._bad: invalid toolset name "_bad"/m);
    assert.match(text, /^toolsets\.quick: unknown key "tool"; did you mean "tools"\?$/m);
    assert.match(text, /^toolsets\.quick: missing required key "tools"$/m);
  });

  it('checks override entries: allowed keys with suggestions, and value types', () => {
    const found = problems({
      toolboxes: {
        dev: {
          mcpServers: { s: { command: 'x', toolOverrides: { a: { descriptionSufix: 'x' }, b: { annotations: { destructiveHint: 'yes' } } } } },
          toolOverrides: { 'dev__s__*': { title: 3 } },
        },
      },
    });
    const text = found.join('\n');
    assert.match(text, /toolOverrides\.a: unknown key "descriptionSufix"; did you mean "descriptionSuffix"\?/);
    assert.match(text, /toolOverrides\.b\.annotations\.destructiveHint: must be true or false/);
    assert.match(text, /toolOverrides\["dev__s__\*"\]\.title: must be a string/);
  });
});
