import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { budgetCatalog, budgetMatches, signatureOf, summaryOf, type AnswerHead, type FullEntry, type IndexGroup } from '../../src/catalog/catalog-index.js';

const head: AnswerHead = { toolbox: 'web', description: 'browser tools', servers_connected: ['browser'], servers_failed: [] };

/** `count` tools with long descriptions and a few parameters, as a server might list them. */
function tools(count: number, server = 'browser'): FullEntry[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `web__${server}__tool_number_${i}`,
    toolbox_name: 'web',
    source_server: server,
    original_name: `tool_number_${i}`,
    description: `[web/${server}] Does thing ${i} to the page. ${'It has a long explanation that goes on. '.repeat(20)}`,
    inputSchema: {
      type: 'object' as const,
      properties: { url: { type: 'string' }, width: { type: 'integer' }, mode: { enum: ['a', 'b'] }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['url'],
    },
  }));
}

const allNames = (answer: { tools: unknown[] }): string[] =>
  answer.tools.flatMap((t) => {
    const entry = t as { name?: string; prefix?: string; names?: string[] };
    return entry.names ? entry.names.map((n) => `${entry.prefix}${n}`) : [entry.name!];
  });

describe('summaries and signatures', () => {
  it('summarises with the title, else the first sentence without the [toolbox/server] prefix', () => {
    const [entry] = tools(1);
    assert.equal(summaryOf(entry!), 'Does thing 0 to the page.');
    assert.equal(summaryOf({ ...entry!, title: 'Thing zero' }), 'Thing zero');
  });

  it('writes a parameter signature with optional marks, enums, arrays and unions', () => {
    assert.equal(signatureOf(tools(1)[0]!.inputSchema), 'url: string, width?: number, mode?: "a" | "b", tags?: string[]');
    assert.equal(signatureOf({ type: 'object', properties: { v: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }), 'v?: string | null');
    assert.equal(signatureOf({ type: 'object' }), '');
  });
});

describe('budgetCatalog', () => {
  it('returns the full catalog when it fits, and when detail "full" is asked whatever its size', () => {
    const small = budgetCatalog(head, tools(3), { budget: 20_000 });
    assert.equal(small.result.detail, 'full');
    assert.equal(small.text, JSON.stringify(small.result));
    const forced = budgetCatalog(head, tools(200), { budget: 20_000, detail: 'full' });
    assert.equal(forced.result.detail, 'full');
    assert.ok(forced.text.length > 20_000);
  });

  it('an index asked for says why truthfully: asked for (the full catalog fits), or the catalog exceeds the budget', () => {
    const asked = budgetCatalog(head, tools(3), { budget: 20_000, detail: 'index' });
    assert.equal(asked.result.detail, 'index');
    assert.match(asked.result.hint ?? '', /the compact index you asked for/);
    assert.doesNotMatch(asked.result.hint ?? '', /exceeds/);
    const forced = budgetCatalog(head, tools(60), { budget: 9000 });
    assert.equal(forced.result.detail, 'index');
    assert.match(forced.result.hint ?? '', /the full catalog exceeds the context budget/);
  });

  it('never exceeds the budget and names every tool, for any size from 1 to 1,000 tools', () => {
    for (const count of [1, 10, 50, 200, 1000]) {
      for (const budget of [4000, 20_000]) {
        const list = tools(count);
        const answer = budgetCatalog(head, list, { budget });
        assert.ok(answer.text.length <= budget, `${count} tools, budget ${budget}: ${answer.text.length}`);
        if (answer.result.next_cursor === undefined) assert.deepEqual(allNames(answer.result), list.map((t) => t.name), `${count}/${budget}`);
      }
    }
  });

  it('shortens summaries before dropping them, and drops them before dropping names', () => {
    const answer = budgetCatalog(head, tools(60), { budget: 9000 });
    assert.equal(answer.result.detail, 'index');
    const first = answer.result.tools[0] as { summary?: string; signature?: string };
    assert.ok(first.signature !== undefined || first.summary !== undefined, JSON.stringify(first));
    assert.equal(answer.result.tools.length, 60);
  });

  it('groups names by server when canonical names overflow, and pages them only when those overflow too', () => {
    const list = [...tools(300, 'browser'), ...tools(300, 'devtools')];
    const grouped = budgetCatalog(head, list, { budget: 20_000 });
    assert.equal(grouped.result.next_cursor, undefined);
    assert.deepEqual((grouped.result.tools as IndexGroup[]).map((g) => g.source_server), ['browser', 'devtools']);
    assert.deepEqual(allNames(grouped.result), list.map((t) => t.name));

    const seen: string[] = [];
    let cursor: number | undefined;
    for (let page = 0; page < 100; page++) {
      const answer = budgetCatalog(head, list, { budget: 2000, cursor });
      assert.ok(answer.text.length <= 2000, `page ${page}: ${answer.text.length}`);
      seen.push(...allNames(answer.result));
      if (answer.result.next_cursor === undefined) break;
      cursor = Number(answer.result.next_cursor);
    }
    assert.deepEqual(seen, list.map((t) => t.name));
  });
});

describe('budgetMatches', () => {
  it('matches too many even for names one by one: as many as fit grouped by server, in rank order, and the way on', () => {
    const list = tools(3000);
    const answer = budgetMatches(head, list, 20_000);
    assert.ok(answer.text.length <= 20_000, `${answer.text.length}`);
    const names = allNames(answer.result);
    assert.ok(names.length > 1000, `${names.length} names`);
    assert.deepEqual(names, list.slice(0, names.length).map((t) => t.name), 'the first matches, in rank order');
    assert.match(answer.result.hint ?? '', new RegExp(`^${3000 - names.length} more match\\(es\\) did not fit .* open the toolbox without tools to page through every name`));
  });

  it('keeps full entries in rank order while they fit, the rest as index entries, within the budget', () => {
    const list = tools(20);
    const answer = budgetMatches(head, list, 8000);
    assert.ok(answer.text.length <= 8000);
    assert.equal(answer.result.detail, 'mixed');
    assert.deepEqual(allNames(answer.result), list.map((t) => t.name));
    const kinds = answer.result.tools.map((t) => ('inputSchema' in t ? 'full' : 'index'));
    assert.equal(kinds.indexOf('index'), kinds.lastIndexOf('full') + 1, 'full entries first, then index entries');
  });

  it('leaves out what does not fit even as a name, and says so', () => {
    const answer = budgetMatches(head, tools(400), 2000);
    assert.ok(answer.text.length <= 2000);
    assert.match(answer.result.hint ?? '', /did not fit/);
  });

  it('names every match grouped by server when the names fit only that way, before leaving any out', () => {
    const list = [...tools(150, 'browser'), ...tools(150, 'pages')];
    const ungrouped = JSON.stringify(list.map((t) => ({ name: t.name, source_server: t.source_server }))).length;
    const budget = Math.floor(ungrouped * 0.8);
    const answer = budgetMatches(head, list, budget);
    assert.ok(answer.text.length <= budget, `${answer.text.length} > ${budget}`);
    assert.deepEqual(allNames(answer.result).sort(), list.map((t) => t.name).sort(), 'every match is named');
    assert.doesNotMatch(answer.result.hint ?? '', /did not fit/);
  });

  it('says how to get the schemas it left out: fewer tools, or detail:"full" (not the same call again)', () => {
    const answer = budgetMatches(head, tools(20), 8000);
    assert.equal(answer.result.detail, 'mixed');
    assert.match(answer.result.hint ?? '', /fewer tools:\[names\]/);
    assert.match(answer.result.hint ?? '', /detail:"full"/);
  });
});

describe('budgetCatalog with a cursor past the end', () => {
  it('says there is no page left rather than listing nothing', () => {
    const answer = budgetCatalog(head, tools(30), { budget: 20_000, cursor: 999 });
    assert.deepEqual(answer.result.tools, []);
    assert.match(answer.result.hint ?? '', /No more tools: the cursor is past the last page \(30 tools in all\)/);
  });
});

describe('budgetMatches with a hint of its own (a search\'s)', () => {
  const searchHint = 'browser__browser__tool_5 and browser__browser__tool_6 match no word of the query: they are only near it in meaning.';

  it('keeps the budget\'s sentence first and the search\'s after it, on every path that cuts', () => {
    for (const [count, budget, says] of [
      [20, 8000, /fewer tools:\[names\]/],
      [400, 2000, /\d+ more match\(es\) did not fit/],
    ] as const) {
      const answer = budgetMatches(head, tools(count), budget, { hint: searchHint });
      assert.ok(answer.text.length <= budget, `${count} tools: ${answer.text.length} > ${budget}`);
      assert.match(answer.result.hint ?? '', says, `${count} tools: the budget's sentence stays`);
      assert.ok(answer.result.hint?.endsWith(searchHint), `${count} tools: the search's hint follows it`);
    }
  });

  it('drops the search\'s hint rather than the budget when not one match fits beside it, and counts what it left out', () => {
    const long = `${searchHint} `.repeat(12);
    const answer = budgetMatches(head, tools(50), 1500, { hint: long });
    assert.ok(answer.text.length <= 1500, `${answer.text.length}`);
    assert.match(answer.result.hint ?? '', /^\d+ more match\(es\) did not fit/);
    assert.ok(!answer.result.hint?.includes('near it in meaning'), 'the long hint is not kept');
  });
});

describe('a catalog with no enabled tool', () => {
  it('says why there may be none, rather than answering an empty list alone', () => {
    const empty = budgetCatalog(head, [], { budget: 20_000 });
    assert.deepEqual(empty.result.tools, []);
    assert.match(empty.result.hint ?? '', /^No enabled tools: every tool of the connected servers is disabled/);
    const nothingConnected = budgetCatalog({ ...head, servers_connected: [] }, [], { budget: 20_000 });
    assert.equal(nothingConnected.result.hint, undefined, 'no servers: the head says why');
  });
});
