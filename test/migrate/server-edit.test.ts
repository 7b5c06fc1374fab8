import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'jsonc-parser';
import { isWorkbenchError } from '../../src/errors.js';
import { addServerText, removeServerText, serverEntry, starterConfigText } from '../../src/migrate/server-edit.js';

/** The text edits behind `init` and `server add/remove` (README "Command line"). */
describe('server-edit', () => {
  it('the starter config is JSONC with comments and loads as a valid config', () => {
    const text = starterConfigText('./workbench-config.schema.json');
    assert.match(text, /^\/\/ /m);
    const edit = addServerText(text, 'starter.json', 'dev', 'extra', { command: 'node', args: ['x.js'] });
    assert.deepEqual(edit.config.toolboxes.map((t) => t.servers.map((s) => s.name)), [['memory', 'extra']]);
  });

  it('adds to a one-line object on its line and to a missing "toolboxes"; everything else stays', () => {
    const compact = '{ "toolboxes": { "a": { "mcpServers": { "s": { "command": "x" } } } } } // end\n';
    const added = addServerText(compact, 'c.json', 'a', 't', { url: 'https://h.example/sse' }).after;
    assert.equal(added, '{ "toolboxes": { "a": { "mcpServers": { "s": { "command": "x" }, "t": { "type": "sse", "url": "https://h.example/sse" } } } } } // end\n');
    const fresh = addServerText('{\n  // nothing yet\n}\n', 'f.json', 'new', 's', { command: 'x', env: { A: '1' } }).after;
    assert.match(fresh, /\/\/ nothing yet/);
    assert.deepEqual(parse(fresh), { toolboxes: { new: { mcpServers: { s: { command: 'x', env: { A: '1' } } } } } });
  });

  it('refuses a taken or invalid name, and removes only what exists', () => {
    const text = '{ "toolboxes": { "a": { "mcpServers": { "s": { "command": "x" }, "u": { "command": "y" } } } } }';
    assert.throws(() => addServerText(text, 'c.json', 'a', 's', { command: 'z' }), (e: unknown) => isWorkbenchError(e, 'USAGE'));
    assert.throws(() => addServerText(text, 'c.json', 'a__b', 'n', { command: 'z' }), (e: unknown) => isWorkbenchError(e, 'USAGE'));
    assert.throws(() => removeServerText(text, 'c.json', 'a', 'nope'), (e: unknown) => isWorkbenchError(e, 'USAGE'));
    assert.throws(() => removeServerText(text, 'c.json', 'b', 's'), (e: unknown) => isWorkbenchError(e, 'TOOLBOX_NOT_FOUND'));
    assert.equal(removeServerText(text, 'c.json', 'a', 's').after, '{ "toolboxes": { "a": { "mcpServers": { "u": { "command": "y" } } } } }');
  });

  it('a remote entry is typed by its URL unless told', () => {
    assert.deepEqual(serverEntry({ url: 'https://h.example/mcp' }), { type: 'http', url: 'https://h.example/mcp' });
    assert.deepEqual(serverEntry({ url: 'https://h.example/sse/?k=1' }), { type: 'sse', url: 'https://h.example/sse/?k=1' });
    assert.deepEqual(serverEntry({ url: 'https://h.example/sse', type: 'http' }), { type: 'http', url: 'https://h.example/sse' });
  });
});
