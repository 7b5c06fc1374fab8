import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { rankTools, searchIndex } from '../../src/catalog/search.js';
import { buildBridge } from '../../src/catalog/search-bridge.js';
import { parseQuery } from '../../src/catalog/search-query.js';
import { parseConfig } from '../../src/config/load.js';
import { SearchMemory, ToolSearch } from '../../src/core/tool-search.js';

/**
 * An answer whose tools matched only through related words, near spellings or meaning says so (README "Search"): the
 * model is told to check them, and where the query's own words are, instead of taking a loose match for the tool it
 * asked for. A short answer is topped up with the tools nearest the query in meaning, and says which those are.
 */

function tool(toolbox: string, name: string, description: string): FullEntry {
  return {
    name: `${toolbox}__s__${name}`,
    toolbox_name: toolbox,
    source_server: 's',
    original_name: name,
    description: `[${toolbox}/s] ${description}`,
    inputSchema: { type: 'object', properties: {} },
  };
}

const CLINIC = [tool('clinic', 'find_doctor', 'Finds a doctor near an address.'), tool('clinic', 'book_visit', 'Books a visit.')];
const STAFF = [tool('staff', 'list_physicians', 'Lists the physicians on staff.')];

const config = parseConfig(
  {
    toolboxes: {
      clinic: { description: 'Appointments', mcpServers: { s: { command: 'node' } } },
      staff: { description: 'People', mcpServers: { s: { command: 'node' } } },
    },
  },
  'test config',
  {},
);

describe('loose matches (README "Search")', () => {
  it('marks a tool that no query word matched as written, only a related word or a near spelling', () => {
    const indexes = [searchIndex(CLINIC)];
    const bridge = buildBridge(indexes);
    const first = (query: string) => rankTools(indexes, parseQuery(query), { bridge })[0];
    assert.deepEqual([first('doctor')?.entry.original_name, first('doctor')?.loose], ['find_doctor', undefined]);
    assert.deepEqual([first('physician')?.entry.original_name, first('physician')?.loose], ['find_doctor', true], 'through the English bridge');
    assert.deepEqual([first('docter')?.entry.original_name, first('docter')?.loose], ['find_doctor', true], 'a near spelling');
    assert.equal(first('doc')?.loose, undefined, 'a word being typed, matched as the start of a word');
    // One word as written is enough.
    assert.equal(first('physician doctor')?.loose, undefined);
  });

  it('says so in the hint, naming tools of other toolboxes that have the query\'s words', async () => {
    const search = new ToolSearch({ config: () => config });
    const memory = new SearchMemory();
    const clinic = search.indexOf(memory, 'clinic', CLINIC);
    search.indexOf(memory, 'staff', STAFF);
    const loose = await search.search(memory, 'clinic', [clinic], 'physician', 1);
    assert.deepEqual(loose.matches.map((e) => e.name), ['clinic__s__find_doctor']);
    assert.match(loose.extra.hint ?? '', /None of these tools has a word of the query as written/);
    assert.match(loose.extra.hint ?? '', /It matches as written in toolbox "staff" \(staff__s__list_physicians\): open that toolbox/);
    const exact = await search.search(memory, 'clinic', [clinic], 'find a doctor', 1);
    assert.equal(exact.extra.hint, undefined, 'a match as written needs no hint');
  });

  it('a query found elsewhere only through a near spelling is pointed to as that, not as a match', async () => {
    const search = new ToolSearch({ config: () => config });
    const memory = new SearchMemory();
    const clinic = search.indexOf(memory, 'clinic', CLINIC);
    search.indexOf(memory, 'staff', [tool('staff', 'compile_kernel', 'Compiles the kernel.')]);
    const answer = await search.search(memory, 'clinic', [clinic], 'kernal', 5);
    assert.deepEqual(answer.matches, []);
    assert.match(answer.extra.hint ?? '', /^No tool here matched the query\. Only related words or near spellings of it match in toolbox "staff" \(staff__s__compile_kernel\)/);
  });

  it('tops up a short answer with tools near the query in meaning, and says which came so', async () => {
    const search = new ToolSearch({ config: () => config });
    const memory = new SearchMemory();
    const clinic = search.indexOf(memory, 'clinic', CLINIC);
    // One tool has the words; the other only comes near them in meaning, after it.
    const mixed = await search.search(memory, 'clinic', [clinic], 'find a doctor', 5);
    assert.deepEqual(mixed.matches.map((e) => e.name), ['clinic__s__find_doctor', 'clinic__s__book_visit']);
    assert.equal(mixed.extra.hint, 'clinic__s__book_visit matches no word of the query: it is only near it in meaning.');
    // No tool here has any word of the query: all by meaning, and the toolbox that has the word as written is named.
    search.indexOf(memory, 'staff', [...STAFF, tool('staff', 'schedule_appointment', 'Schedules an appointment with a nurse.')]);
    const meaning = await search.search(memory, 'clinic', [clinic], 'schedule', 5);
    assert.ok(meaning.matches.length > 0 && meaning.matches.every((e) => e.toolbox_name === 'clinic'));
    assert.match(meaning.extra.hint ?? '', /^No tool here has a word of the query: these are the tools nearest to it in meaning, so check that one fits\./);
    assert.match(meaning.extra.hint ?? '', /It matches as written in toolbox "staff" \(staff__s__schedule_appointment\)/);
    const one = await search.search(memory, 'clinic', [clinic], 'schedule', 1);
    assert.match(one.extra.hint ?? '', /^No tool here has a word of the query: this is the tool nearest to it in meaning/);
    // A word with no vector and in no tool: nothing to top up with, so the empty answer's hint as before.
    const nothing = await search.search(memory, 'clinic', [clinic], 'zzqx', 5);
    assert.deepEqual(nothing.matches, []);
    assert.match(nothing.extra.hint ?? '', /^No tool matched the query\./);
  });

  it("draws a hint from the asking scope's own memory, never from what another scope was shown", async () => {
    const search = new ToolSearch({ config: () => config });
    const mine = new SearchMemory();
    const theirs = new SearchMemory();
    const clinic = search.indexOf(mine, 'clinic', CLINIC);
    // Another session was shown a staff tool (its server added it for that session, say); this one never opened staff.
    search.indexOf(theirs, 'staff', [...STAFF, tool('staff', 'schedule_appointment', 'Schedules an appointment with a nurse.')]);
    const alone = await search.search(mine, 'clinic', [clinic], 'schedule', 5);
    assert.doesNotMatch(alone.extra.hint ?? '', /staff/, 'no tool or toolbox of the other memory is named');
    const nothing = await search.search(mine, 'clinic', [clinic], 'appointment nurse', 5);
    assert.doesNotMatch(JSON.stringify(nothing), /schedule_appointment/);
    // Once this scope was shown staff itself, its hints name it.
    search.indexOf(mine, 'staff', [...STAFF, tool('staff', 'schedule_appointment', 'Schedules an appointment with a nurse.')]);
    const shown = await search.search(mine, 'clinic', [clinic], 'schedule', 5);
    assert.match(shown.extra.hint ?? '', /It matches as written in toolbox "staff" \(staff__s__schedule_appointment\)/);
  });
});
