import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Tool } from '@modelcontextprotocol/client';
import { ToolboxCatalog } from '../../src/catalog/toolbox-catalog.js';
import { createVisibilityPolicy } from '../../src/catalog/visibility.js';
import type { WorkbenchConfig } from '../../src/config/types.js';
import { workbenchInstructions } from '../../src/core/instructions.js';
import { namedTools, notFoundExtra } from '../../src/core/named-tools.js';
import { ShownLists } from '../../src/core/shown-lists.js';

/** Parts of an open_toolbox answer that list names stay bounded, and say what they left out. */

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });

describe('bounded lists in open_toolbox answers', () => {
  it('catalog_changes names at most 20 tools per kind, then counts the rest', () => {
    const shown = new ShownLists();
    shown.record('dev', 'fx', Array.from({ length: 30 }, (_, i) => tool(`old_${i}`)));
    shown.observe('dev', 'fx', [...Array.from({ length: 30 }, (_, i) => tool(`old_${i}`)), ...Array.from({ length: 60 }, (_, i) => tool(`new_${i}`))]);
    const [change] = shown.take();
    assert.equal(change!.added.length, 21);
    assert.equal(change!.added.at(-1), '(40 more)');
    assert.deepEqual(change!.removed, []);
  });

  it('not_found echoes a long name cut to 80 characters', () => {
    const config = { source: 'test', toolboxes: [{ name: 'dev', description: '', servers: [], disabledTools: [] }], warnings: [] } as unknown as WorkbenchConfig;
    const catalog = new ToolboxCatalog('dev', [{ server: 'fx', tools: [tool('echo')] }], createVisibilityPolicy({ config }));
    const long = 'x'.repeat(245);
    const { notFound } = namedTools({ entries: [], catalogs: [catalog] }, [long, `${long}*`]);
    assert.equal(notFound.length, 2);
    for (const entry of notFound) assert.equal(entry.name.length, 81, entry.name.slice(0, 20));
  });
});

describe('names that match nothing are never a dead end', () => {
  const config = { source: 'test', toolboxes: [{ name: 'dev', description: '', servers: [{ name: 'fx', disabledTools: [] }], disabledTools: ['delete_*'] }], warnings: [] } as unknown as WorkbenchConfig;
  const catalog = new ToolboxCatalog('dev', [{ server: 'fx', tools: [tool('echo'), tool('delete_all'), tool('delete_one')] }], createVisibilityPolicy({ config }));

  it('a glob that matches only disabled tools says so, and why', () => {
    const { entries, notFound } = namedTools({ entries: [], catalogs: [catalog] }, ['delete_*']);
    assert.deepEqual(entries, []);
    assert.match(notFound[0]!.disabled ?? '', /^It matches only disabled tools \(2\), such as: Tool "dev__fx__delete_all" is disabled/);
  });

  it('a -/_ variant of a disabled tool\'s name is that tool, disabled (not unknown, not a closest other tool)', () => {
    for (const name of ['delete-all', 'dev__fx__delete-all']) {
      const found = catalog.find(name);
      assert.ok('hidden' in found && found.hidden.name === 'dev__fx__delete_all', `${name}: ${JSON.stringify(found)}`);
    }
    const { notFound } = namedTools({ entries: [], catalogs: [catalog] }, ['delete-all']);
    assert.match(notFound[0]!.disabled ?? '', /Tool "dev__fx__delete_all" is disabled/);
  });

  it('a name with no closest name and no reason gets a hint naming where to look', () => {
    const { notFound } = namedTools({ entries: [], catalogs: [catalog] }, ['zzzz_qqqq']);
    assert.deepEqual(notFound[0]!.suggestions, []);
    assert.match(notFoundExtra(notFound).hint ?? '', /call open_toolbox without tools to see every name, or with query/);
    assert.deepEqual(notFoundExtra([]), {});
  });
});

describe('the initialize instructions stay short whatever the config holds', () => {
  it('cuts long descriptions and lists toolboxes up to a bound, counting the rest', () => {
    const toolboxes = Array.from({ length: 500 }, (_, i) => ({ name: `box${i}`, description: 'd'.repeat(3_000), servers: [{}] }));
    const text = workbenchInstructions({ toolboxes } as unknown as WorkbenchConfig, 20_000, undefined);
    assert.ok(text.length < 10_000, `${text.length} characters`);
    assert.match(text, /- box0 \(1 server\): d{200}…\n/);
    assert.match(text, /- … and \d+ more toolboxes \(the toolbox_name parameter of open_toolbox lists every name\)/);
    const few = workbenchInstructions({ toolboxes: toolboxes.slice(0, 3).map((t) => ({ ...t, description: 'short' })) } as unknown as WorkbenchConfig, 20_000, undefined);
    assert.match(few, /- box2 \(1 server\): short\n/);
    assert.doesNotMatch(few, /more toolboxes/);
  });
});
