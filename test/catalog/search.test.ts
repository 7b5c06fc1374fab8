import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { searchIndex, searchTools, stem, words } from '../../src/catalog/search.js';

function tool(name: string, description: string, properties: Record<string, object> = {}, title?: string): FullEntry {
  return {
    name: `t__s__${name}`,
    toolbox_name: 't',
    source_server: 's',
    original_name: name,
    ...(title ? { title } : {}),
    description: `[t/s] ${description}`,
    inputSchema: { type: 'object', properties: properties as FullEntry['inputSchema']['properties'] },
  };
}

describe('search', () => {
  it('splits snake, kebab, camel and dotted names into words', () => {
    assert.deepEqual(words('browser.take_screenshot-nowHTTPServer'), ['browser', 'take', 'screenshot', 'now', 'http', 'server']);
  });

  it('stems plurals and -ing/-ed endings to one form', () => {
    assert.equal(stem('screenshots'), stem('screenshot'));
    assert.equal(stem('creating'), stem('create'));
    assert.equal(stem('created'), stem('creates'));
    assert.equal(stem('entities'), stem('entity'));
  });

  it('ranks by name parts, title, description and parameters, deterministically', () => {
    const entries = [
      tool('navigate', 'Open a URL in the browser.', { url: { type: 'string', description: 'Address to open' } }),
      tool('takeScreenshot', 'Capture the visible part of the page as PNG.', { fullPage: { type: 'boolean' } }),
      tool('page.pdf', 'Print the page to a PDF file.'),
      tool('fill_form', 'Type values into form fields.', { fields: { type: 'array', description: 'Field selectors and values' } }),
    ];
    const index = searchIndex(entries);
    assert.equal(searchTools([index], 'screenshots of the page', 5)[0]!.original_name, 'takeScreenshot');
    assert.equal(searchTools([index], 'pdf', 5)[0]!.original_name, 'page.pdf');
    assert.equal(searchTools([index], 'open address', 5)[0]!.original_name, 'navigate');
    assert.equal(searchTools([index], 'field selectors', 5)[0]!.original_name, 'fill_form');
    assert.deepEqual(searchTools([index], 'page', 5), searchTools([searchIndex([...entries])], 'page', 5));
    assert.deepEqual(searchTools([index], 'unrelated words', 5), []);
    assert.equal(searchTools([index], 'page', 1).length, 1);
  });

  it('searches several indexes as one', () => {
    const a = searchIndex([tool('read_graph', 'Read the knowledge graph.')]);
    const b = searchIndex([tool('read_file', 'Read a file.')]);
    assert.deepEqual(searchTools([a, b], 'read file', 5).map((t) => t.original_name), ['read_file', 'read_graph']);
  });
});
