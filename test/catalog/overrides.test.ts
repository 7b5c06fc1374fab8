import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { applyProject, parseProjectFile } from '../../src/config/project-file.js';
import { createOverrideResolver, overriddenText } from '../../src/catalog/overrides.js';

const config = applyProject(
  parseConfig(
    {
      toolboxes: {
        dev: {
          mcpServers: {
            db: {
              command: 'x',
              toolOverrides: {
                query: { description: 'Run SQL.', descriptionSuffix: 'Server note.', annotations: { readOnlyHint: true } },
                'dev__db__*': { title: 'From the server' },
              },
            },
          },
          toolOverrides: { 'dev__db__q*': { descriptionSuffix: 'Toolbox note.', title: 'From the toolbox' } },
        },
      },
    },
    '/cfg.json',
    {},
  ),
  parseProjectFile({ toolOverrides: { dev__db__query: { descriptionSuffix: 'Project note.', annotations: { destructiveHint: true } } } }, '/repo/.mcp-workbench.json'),
);

describe('tool overrides', () => {
  const resolve = createOverrideResolver(config);

  it('applies server, then toolbox, then project: later fields win, suffixes accumulate, annotations merge', () => {
    assert.deepEqual(resolve('dev', 'db', 'query'), {
      title: 'From the toolbox',
      description: 'Run SQL.',
      descriptionSuffix: 'Server note. Toolbox note. Project note.',
      annotations: { readOnlyHint: true, destructiveHint: true },
    });
    assert.deepEqual(resolve('dev', 'db', 'tables'), { title: 'From the server' });
    assert.equal(resolve('dev', 'other', 'query'), undefined);
  });

  it('shows the overridden text over the server\'s, keeping what is not overridden', () => {
    const tool = {
      name: 'query',
      title: 'Query',
      description: 'Runs a query against the database and returns rows.',
      inputSchema: { type: 'object' as const },
      annotations: { openWorldHint: false, readOnlyHint: false },
    };
    assert.deepEqual(overriddenText(tool, resolve('dev', 'db', 'query')), {
      title: 'From the toolbox',
      description: 'Run SQL. Server note. Toolbox note. Project note.',
      annotations: { openWorldHint: false, readOnlyHint: true, destructiveHint: true },
    });
    assert.deepEqual(overriddenText(tool, undefined), { title: 'Query', description: tool.description, annotations: tool.annotations });
    assert.deepEqual(overriddenText(tool, { descriptionSuffix: 'Staging only.' }).description, `${tool.description} Staging only.`);
  });
});
