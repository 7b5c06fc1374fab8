import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { identityText, modernResponse, modernResponseText } from '../../src/server/modern-wire.js';

const SERVER_INFO = { name: 'mcp-workbench', title: 'MCP Workbench', version: '1.2.3' };
const text = (t: string) => ({ type: 'text', text: t });

/** Results the fast path frames itself, and results it leaves to the SDK (both framings decline those alike). */
const RESULTS: [string, unknown, 'framed' | 'declined'][] = [
  ['text only', { content: [text('Echo: x')] }, 'framed'],
  ['no content blocks', { content: [] }, 'framed'],
  ['isError', { content: [text('nope')], isError: true }, 'framed'],
  ['isError false', { content: [text('ok')], isError: false }, 'framed'],
  ['structuredContent', { content: [text('{"a":1}')], structuredContent: { a: 1, b: ['x', null] } }, 'framed'],
  ['an empty _meta', { _meta: {}, content: [text('x')] }, 'framed'],
  ['a _meta of its own', { _meta: { trace: 'abc', nested: { n: 1 }, '1': 'numeric key' }, content: [text('x')], isError: false }, 'framed'],
  ['text that needs escaping', { content: [text('line\n"quoted" \u2028 \\ é')] }, 'framed'],
  ['an image block', { content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] }, 'declined'],
  ['a text block with annotations', { content: [{ type: 'text', text: 'x', annotations: { priority: 1 } }] }, 'declined'],
  ['keys out of schema order', { content: [text('x')], _meta: {} }, 'declined'],
  ['an unknown key', { content: [text('x')], extra: 1 }, 'declined'],
  ['a server identity of its own', { _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'other' } }, content: [] }, 'declined'],
  ['isError not a boolean', { content: [], isError: 'yes' }, 'declined'],
  ['no content', { structuredContent: {} }, 'declined'],
];

describe('modern-wire: a complete answer framed as text', () => {
  const identity = identityText(SERVER_INFO);
  for (const [name, result, expected] of RESULTS) {
    for (const id of [7, 'req-7']) {
      it(`${name} (id ${JSON.stringify(id)}) is the text of modernResponse, byte for byte`, () => {
        const message = modernResponse(id, result as CallToolResult, SERVER_INFO);
        const framed = modernResponseText(id, result as CallToolResult, identity);
        assert.equal(framed, message === undefined ? undefined : JSON.stringify(message));
        assert.equal(framed === undefined ? 'declined' : 'framed', expected);
      });
    }
  }
});
