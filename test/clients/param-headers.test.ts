import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { encodeFieldValue, paramHeaders, scanHeaderDeclarations } from '../../src/clients/param-headers.js';
import { TRANSPORTS, startOver } from '../helpers/both-transports.js';
import { logLines } from '../helpers/log-lines.js';
import { startModernHttp } from '../helpers/http-servers.js';
import { node, textOf } from '../helpers/workbench-process.js';

// A modern (2026-07-28) server's tools may declare `x-mcp-header`s: over Streamable HTTP each call of such a tool
// carries `Mcp-Param-<Name>` headers mirroring its arguments, and a tool whose declarations are invalid is left out.

const object = (properties: Record<string, unknown>) => ({ type: 'object', properties });
const header = (type: string, name: unknown) => ({ type, 'x-mcp-header': name });

describe('scanHeaderDeclarations', () => {
  it('finds declarations on properties at any depth through "properties"', () => {
    const scan = scanHeaderDeclarations(
      object({ region: header('string', 'Region'), n: header('integer', 'N'), on: header('boolean', 'On'), a: object({ b: object({ c: header('string', 'Deep') }) }), plain: { type: 'string' } }),
    );
    assert.deepEqual(scan, {
      declarations: [
        { path: ['region'], name: 'Region' },
        { path: ['n'], name: 'N' },
        { path: ['on'], name: 'On' },
        { path: ['a', 'b', 'c'], name: 'Deep' },
      ],
    });
    assert.deepEqual(scanHeaderDeclarations(object({ text: { type: 'string' } })), { declarations: [] });
  });

  it('does not take data (default, const, enum, examples) or a property named x-mcp-header for a declaration', () => {
    const schema = object({ 'x-mcp-header': { type: 'string' }, a: { type: 'object', default: { 'x-mcp-header': 'X' }, examples: [{ 'x-mcp-header': 'Y' }] } });
    assert.deepEqual(scanHeaderDeclarations(schema), { declarations: [] });
  });

  const invalid: [string, unknown, RegExp][] = [
    ['an empty name', object({ a: header('string', '') }), /"\/properties\/a" is "", not a non-empty string/],
    ['a name that is not a string', object({ a: header('string', 7) }), /is 7, not a non-empty string/],
    ['a name that is not a token', object({ a: header('string', 'Two words') }), /"Two words", which is not a valid HTTP header name/],
    ['a number property', object({ a: header('number', 'Amount') }), /of type "number"; only string, integer and boolean/],
    ['an object property', object({ a: { ...object({}), 'x-mcp-header': 'Obj' } }), /of type "object"/],
    ['a property without a type', object({ a: { 'x-mcp-header': 'Any' } }), /of type null/],
    ['a name twice, ignoring case', object({ a: header('string', 'Tenant'), b: object({ c: header('string', 'tenant') }) }), /declares "tenant", which is already declared as "Tenant"/],
    ['a declaration under items', object({ a: { type: 'array', items: header('string', 'Item') } }), /"\/properties\/a\/items" is not on a property reached/],
    ['under additionalProperties', { ...object({}), additionalProperties: header('string', 'X') }, /"\/additionalProperties" is not/],
    ['under anyOf', { anyOf: [object({ a: header('string', 'X') })] }, /"\/anyOf\[0\]\/properties\/a" is not/],
    ['under if/then', { ...object({}), if: object({}), then: object({ a: header('string', 'X') }) }, /"\/then\/properties\/a" is not/],
    ['under $defs', { ...object({ a: { $ref: '#/$defs/d' } }), $defs: { d: header('string', 'X') } }, /"\/\$defs\/d" is not/],
    ['on the root', { ...object({}), 'x-mcp-header': 'Root' }, /"\/" is not/],
  ];
  for (const [what, schema, problem] of invalid) {
    it(`finds ${what} invalid`, () => {
      const scan = scanHeaderDeclarations(schema);
      assert.ok('problem' in scan, `no problem found in ${JSON.stringify(schema)}`);
      assert.match(scan.problem, problem);
    });
  }
});

describe('paramHeaders', () => {
  const declarations = [
    { path: ['region'], name: 'Region' },
    { path: ['n'], name: 'N' },
    { path: ['on'], name: 'On' },
    { path: ['a', 'b'], name: 'Deep' },
  ];

  it('mirrors strings, integers and booleans at their paths', () => {
    assert.deepEqual(paramHeaders(declarations, { region: 'eu-west-1', n: -42, on: false, a: { b: 'x' } }), {
      'Mcp-Param-Region': 'eu-west-1',
      'Mcp-Param-N': '-42',
      'Mcp-Param-On': 'false',
      'Mcp-Param-Deep': 'x',
    });
  });

  it('sends nothing for absent, null, unsafe or non-primitive values', () => {
    assert.deepEqual(paramHeaders(declarations, undefined), {});
    assert.deepEqual(paramHeaders(declarations, { region: null, n: 2 ** 60, on: [true], a: 'not an object' }), {});
    assert.deepEqual(paramHeaders(declarations, { n: Number.NaN, a: { b: null } }), {});
  });

  it('sends a value that is not a plain field value in base64', () => {
    const cases: [string, string][] = [
      ['plain value', 'plain value'],
      ['a\tb', 'a\tb'],
      ['', '=?base64??='],
      [' leading', `=?base64?${Buffer.from(' leading').toString('base64')}?=`],
      ['trailing\t', `=?base64?${Buffer.from('trailing\t').toString('base64')}?=`],
      ['Zürich', `=?base64?${Buffer.from('Zürich', 'utf8').toString('base64')}?=`],
      ['line\nbreak', `=?base64?${Buffer.from('line\nbreak').toString('base64')}?=`],
      ['=?base64?aGk=?=', `=?base64?${Buffer.from('=?base64?aGk=?=').toString('base64')}?=`],
    ];
    for (const [value, sent] of cases) assert.equal(encodeFieldValue(value), sent, JSON.stringify(value));
  });
});

const modernFixture = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));


const INVALID = ['bad_empty', 'bad_number', 'bad_duplicate', 'bad_items'];

for (const transport of TRANSPORTS) {
  describe(`x-mcp-header tools of a modern Streamable HTTP server, workbench over ${transport}`, () => {
    it('offers only the valid tools, and each call carries the Mcp-Param-* headers of its arguments', async () => {
      const server = await startModernHttp('--param-headers');
      const wb = await startOver(transport, { toolboxes: { web: { mcpServers: { modern: { type: 'http', url: server.url } } } } }, [], { WORKBENCH_LOG_FORMAT: 'json' });
      const route = async (args: Record<string, unknown>): Promise<Record<string, string>> => {
        const result: CallToolResult = await wb.useTool('web', 'web__modern__route', args);
        assert.notEqual(result.isError, true, textOf(result));
        return JSON.parse(textOf(result)) as Record<string, string>;
      };
      try {
        const opened = await wb.call('open_toolbox', { toolbox_name: 'web' });
        assert.notEqual(opened.isError, true, textOf(opened));
        const names = (opened.structuredContent as { tools: { original_name: string }[] }).tools.map((t) => t.original_name);
        assert.ok(names.includes('route') && names.includes('echo'), names.join(', '));
        for (const bad of INVALID) assert.ok(!names.includes(bad), `${bad} was offered: ${names.join(', ')}`);
        const skipped = logLines(wb.stderr()).filter((l) => l.scope === 'web/modern' && l.level === 'warn' && l.fields.problem === 'invalid-header-declarations');
        assert.deepEqual([...new Set(skipped.map((l) => l.fields.tool))].sort(), [...INVALID].sort(), wb.stderr());
        const refused = await wb.useTool('web', 'web__modern__bad_number', { a: 1 });
        assert.equal(refused.isError, true, 'an invalid tool is never called');

        assert.deepEqual(await route({ region: 'eu-west-1', priority: 7, urgent: true, target: { zone: 'b' }, label: 'Zürich', note: 'not mirrored' }), {
          'mcp-param-label': `=?base64?${Buffer.from('Zürich', 'utf8').toString('base64')}?=`,
          'mcp-param-priority': '7',
          'mcp-param-region': 'eu-west-1',
          'mcp-param-urgent': 'true',
          'mcp-param-zone': 'b',
        });
        assert.deepEqual(await route({ urgent: false, label: ' padded' }), {
          'mcp-param-label': `=?base64?${Buffer.from(' padded').toString('base64')}?=`,
          'mcp-param-urgent': 'false',
        });
        assert.deepEqual(await route({}), {}, 'absent arguments send no header');
        // The workbench refuses a null for a typed property itself; a null on the path to one is valid.
        assert.deepEqual(await route({ target: null }), {}, 'no header under a null argument');
        assert.equal(textOf(await wb.useTool('web', 'web__modern__echo', { text: 'hi' })), 'echo: hi');
      } finally {
        await wb.close();
        await server.close();
      }
    });
  });
}

describe('x-mcp-header tools of a modern stdio server', () => {
  it('leaves the invalid tools out too, and calls the valid ones without headers (stdio has none)', async () => {
    const wb = await startOver('stdio', { toolboxes: { local: { mcpServers: { modern: { command: node, args: [modernFixture, '--param-headers'] } } } } });
    try {
      const opened = await wb.call('open_toolbox', { toolbox_name: 'local' });
      const names = (opened.structuredContent as { tools: { original_name: string }[] }).tools.map((t) => t.original_name);
      assert.ok(names.includes('route'), names.join(', '));
      for (const bad of INVALID) assert.ok(!names.includes(bad), `${bad} was offered: ${names.join(', ')}`);
      const result = await wb.useTool('local', 'local__modern__route', { region: 'eu-west-1' });
      assert.equal(textOf(result), '{}');
    } finally {
      await wb.close();
    }
  });
});
