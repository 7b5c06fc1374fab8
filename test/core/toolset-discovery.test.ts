import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TRANSPORTS, startOver, type AnyWorkbench } from '../helpers/both-transports.js';
import { everythingServer, fixtureServer, tempDir, textOf } from '../helpers/workbench-process.js';

/**
 * A toolset is opened, searched and budgeted like a toolbox (README: "Toolsets" and "open_toolbox"): its answers
 * hold only its own tools, under the same canonical names, and never exceed the budget.
 */
interface Answer {
  toolbox: string;
  detail: string;
  tools: { name?: string; names?: string[]; prefix?: string; inputSchema?: unknown }[];
  not_found?: { name: string }[];
  next_cursor?: string;
}

const BUDGET = 4000;

function config(): unknown {
  return {
    toolboxes: {
      demo: { description: 'Reference server', mcpServers: { everything: everythingServer() } },
      big: { description: 'Many tools', mcpServers: { catalog: fixtureServer('--catalog', '300') } },
    },
    toolsets: {
      // Every tool of the big toolbox plus one of demo's: far more than the budget holds in full.
      wide: { description: 'Most of it', tools: ['big__*', 'demo__everything__get-sum'] },
      math: { description: 'Just arithmetic', tools: ['demo__everything__get-sum', 'big__catalog__add'] },
    },
  };
}

async function open(wb: AnyWorkbench, args: Record<string, unknown>): Promise<{ answer: Answer; text: string }> {
  const result = await wb.call('open_toolbox', args);
  assert.notEqual(result.isError, true, textOf(result));
  return { answer: JSON.parse(textOf(result)) as Answer, text: textOf(result) };
}

function names(answer: Answer): string[] {
  return answer.tools.flatMap((t) =>
    t.name !== undefined ? [t.name] : (t.names ?? []).map((n) => `${t.prefix}${n}`),
  );
}

for (const transport of TRANSPORTS) {
  describe(`toolsets answer like toolboxes: budget, detail and search (${transport})`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let wb: AnyWorkbench;
    before(async () => {
      data = await tempDir();
      wb = await startOver(transport, config(), ['--catalog-budget', String(BUDGET)], { MCP_WORKBENCH_CACHE_DIR: join(data.dir, 'cache') });
    });
    after(async () => {
      await wb.close();
      await data.cleanup();
    });

    it('a toolset too big for the budget comes as an index within it (paged, as a toolbox is) naming every one of its tools', async () => {
      const listed: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const { answer, text } = await open(wb, { toolbox_name: 'wide', ...(cursor ? { cursor } : {}) });
        assert.ok(text.length <= BUDGET, `${text.length} characters`);
        assert.notEqual(answer.detail, 'full');
        listed.push(...names(answer));
        cursor = answer.next_cursor;
        pages++;
      } while (cursor !== undefined && pages < 20);
      assert.equal(new Set(listed).size, listed.length, 'no name twice across pages');
      assert.ok(listed.includes('demo__everything__get-sum'));
      assert.ok(listed.length > 300, `${listed.length} names`);
      assert.ok(listed.every((n) => n.startsWith('big__') || n === 'demo__everything__get-sum'), 'only the toolset\'s tools');
    });

    it('detail and search stay inside the toolset', async () => {
      const detail = await open(wb, { toolbox_name: 'math', tools: ['get-sum', 'demo__everything__echo'] });
      assert.deepEqual(names(detail.answer), ['demo__everything__get-sum']);
      assert.ok(detail.answer.tools[0]?.inputSchema, 'full entry with its schema');
      assert.deepEqual(detail.answer.not_found?.map((n) => n.name), ['demo__everything__echo']);

      const search = await open(wb, { toolbox_name: 'math', query: 'add two numbers' });
      const found = names(search.answer);
      assert.ok(found.length > 0 && found.every((n) => n === 'demo__everything__get-sum' || n === 'big__catalog__add'), found.join(', '));
    });
  });
}
