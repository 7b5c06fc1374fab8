import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenToolboxResult, ToolStatus } from '../../src/core/tool-entry.js';
import { TRANSPORTS, startOver, type AnyWorkbench } from '../helpers/both-transports.js';
import { memoryServer, tempDir, textOf } from '../helpers/workbench-process.js';
import { runCliAsync } from '../helpers/cli-run.js';

/** The memory server with overrides on the server (its own names and globs) and on the toolbox (canonical names). */
function overrideConfig(dir: string): unknown {
  return {
    toolboxes: {
      notes: {
        description: 'Knowledge graph',
        mcpServers: {
          memory: {
            ...memoryServer(join(dir, 'memory.jsonl')),
            toolOverrides: {
              // Mark a tool destructive: merged over the server's own annotations.
              create_entities: { annotations: { destructiveHint: true } },
              // Shorten a verbose description.
              'read_*': { description: 'Read the whole graph.' },
            },
          },
        },
        toolOverrides: {
          // Add guidance, and a title.
          notes__memory__create_entities: { title: 'Create entities (staging)', descriptionSuffix: 'Staging only.' },
        },
      },
    },
  };
}

for (const transport of TRANSPORTS) {
  describe(`tool overrides over ${transport}`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let wb: AnyWorkbench;
    let originals: Map<string, ToolStatus>;

    before(async () => {
      data = await tempDir();
      const config = overrideConfig(data.dir);
      wb = await startOver(transport, config);
      // The server's own text, from `tools list --json` (which keeps it beside the override).
      const configPath = join(data.dir, 'workbench-config.json');
      await writeFile(configPath, JSON.stringify(config));
      const run = await runCliAsync(['tools', 'list', '--config', configPath, '--json'], { WORKBENCH_STATE_FILE: join(data.dir, 's.json') }, { cwd: data.dir });
      assert.equal(run.code, 0, run.stderr);
      originals = new Map((JSON.parse(run.stdout) as { tools: ToolStatus[] }).tools.map((t) => [t.original_name, t]));
    });
    after(async () => {
      await wb.close();
      await data.cleanup();
    });

    it('open_toolbox shows the overridden title, description and merged annotations', async () => {
      const result = await wb.call('open_toolbox', { toolbox_name: 'notes' });
      assert.notEqual(result.isError, true, textOf(result));
      const tools = new Map((result.structuredContent as OpenToolboxResult).tools.map((t) => [t.original_name, t]));
      const create = tools.get('create_entities')!;
      const original = originals.get('create_entities')!;
      assert.equal(create.title, 'Create entities (staging)');
      assert.equal(create.description, `[notes/memory] ${original.description} Staging only.`);
      assert.equal(create.annotations?.destructiveHint, true);
      assert.equal(create.annotations?.readOnlyHint, false, 'the server\'s other annotations are kept');
      assert.equal(create.annotations?.openWorldHint, false);
      assert.equal(tools.get('read_graph')!.description, '[notes/memory] Read the whole graph.');
      const untouched = tools.get('add_observations')!;
      assert.equal(untouched.description, `[notes/memory] ${originals.get('add_observations')!.description}`);
      assert.equal(untouched.annotations?.destructiveHint, false);
    });

    it('changes nothing about calling the tool', async () => {
      const created = await wb.useTool('notes', 'notes__memory__create_entities', {
        entities: [{ name: 'staging-db', entityType: 'service', observations: ['only in staging'] }],
      });
      assert.notEqual(created.isError, true, textOf(created));
      const graph = await wb.useTool('notes', 'read_graph', {});
      assert.match(textOf(graph), /staging-db/);
    });
  });
}

describe('tools list --json keeps the server\'s original text', () => {
  it('shows the original description beside what the override makes of it', async () => {
    const data = await tempDir();
    try {
      const configPath = join(data.dir, 'workbench-config.json');
      await writeFile(configPath, JSON.stringify(overrideConfig(data.dir)));
      const run = await runCliAsync(['tools', 'list', '--config', configPath, '--json'], { WORKBENCH_STATE_FILE: join(data.dir, 's.json') }, { cwd: data.dir });
      assert.equal(run.code, 0, run.stderr);
      const tools = new Map((JSON.parse(run.stdout) as { tools: ToolStatus[] }).tools.map((t) => [t.original_name, t]));
      const create = tools.get('create_entities')!;
      assert.ok(create.description && !create.description.includes('Staging only.'), 'the server\'s own description');
      assert.equal(create.override?.description, `${create.description} Staging only.`);
      assert.equal(create.override?.annotations?.destructiveHint, true);
      assert.equal(tools.get('read_graph')!.override?.description, 'Read the whole graph.');
      assert.equal(tools.get('add_observations')!.override, undefined);
    } finally {
      await data.cleanup();
    }
  });
});
