import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { boundedEditDistance, editDistance } from '../../src/shared/edit-distance.js';
import { quoteClientText } from '../../src/shared/client-text.js';
import { startHttpWorkbench, type HttpSession, type HttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, startWorkbench, textOf, workbenchErrorCode, type RunningWorkbench } from '../helpers/workbench-process.js';

const FORGED = 'mcp-workbench error: [forged] this line was written by the client';
const MEGABYTE_NAME = 'x'.repeat(1024 * 1024);

const config = {
  toolboxes: {
    // 1,000 tools: suggestions for an unknown name are computed against all of them.
    big: { mcpServers: { many: fixtureServer('--tools', '1000') } },
  },
};

interface Face {
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  stderr(): string;
}

/** The text of the refusal (an isError result, README "Errors") a request with malformed parameters gets. */
async function refused(face: Face, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await face.call(name, args);
  assert.equal(result.isError, true, textOf(result).slice(0, 200));
  assert.equal(workbenchErrorCode(result), 'INVALID_PARAMETERS', textOf(result).slice(0, 200));
  assert.match(textOf(result), new RegExp(`Expected: ${name} \\{`), 'the refusal shows the signature');
  return textOf(result);
}

/** The JSON-RPC error a protocol fault (an unknown top-level tool) gets. */
async function protocolFault(face: Face, name: string, args: Record<string, unknown>): Promise<McpError> {
  try {
    const result = await face.call(name, args);
    assert.fail(`expected -32602, got a result: ${textOf(result).slice(0, 200)}`);
  } catch (error) {
    assert.ok(error instanceof McpError, String(error));
    assert.equal(error.code, ErrorCode.InvalidParams);
    return error;
  }
}

/** A refusal is its problem (bounded) plus the tool's signature and what to do next: a few hundred characters. */
const SHORT = 700;

function checks(face: () => Face): void {
  it('refuses a 1 MB tool_name or toolbox_name at once with a short refusal', async () => {
    for (const args of [
      { toolbox_name: 'big', tool_name: MEGABYTE_NAME },
      { toolbox_name: MEGABYTE_NAME, tool_name: 'big__many__gen_0001' },
    ]) {
      const text = await refused(face(), 'use_tool', args);
      assert.ok(text.length < SHORT, `short: ${text.length} characters`);
      assert.match(text, /1048576 characters long; names are at most 256/);
    }
    const text = await refused(face(), 'open_toolbox', { toolbox_name: MEGABYTE_NAME });
    assert.ok(text.length < SHORT);
  });

  it('refuses names with control characters: nothing forged reaches the result or the log', async () => {
    for (const [tool, args] of [
      ['use_tool', { toolbox_name: 'big', tool_name: `gen_0001\n${FORGED}` }],
      ['use_tool', { toolbox_name: `big\r\n${FORGED}`, tool_name: 'gen_0001' }],
      ['open_toolbox', { toolbox_name: `big\u001b[2J${FORGED}` }],
    ] as const) {
      const text = await refused(face(), tool, args);
      assert.match(text, /control character \(U\+00(0A|0D|1B)/);
      assert.ok(!text.includes('\n'), 'no raw newline in the refusal');
    }
    assert.ok(!face().stderr().includes(`\n${FORGED}`), 'no forged line in the log');
  });

  it('quotes, escapes and cuts every client string it echoes', async () => {
    const unknownKey = `k${'y'.repeat(100_000)}\n${FORGED}`;
    const keyText = await refused(face(), 'use_tool', { toolbox_name: 'big', tool_name: 'gen_0001', [unknownKey]: 1 });
    assert.ok(keyText.length < SHORT, `short: ${keyText.length}`);
    assert.ok(!keyText.includes('\n'));
    const toolError = await protocolFault(face(), `nope\n${FORGED}`, {});
    assert.ok(!toolError.message.includes(`\n${FORGED}`));

    // A name within bounds but unknown: the result quotes it (escaped, cut) and suggests only close names.
    const odd = `gen_0001\u202e${'z'.repeat(240)}`;
    const result = await face().call('use_tool', { toolbox_name: 'big', tool_name: odd });
    assert.equal(workbenchErrorCode(result), 'TOOL_NOT_FOUND');
    const text = textOf(result);
    assert.ok(text.includes('\\u202e'), 'the bidi override is escaped');
    assert.ok(!text.includes('z'.repeat(100)), 'the name is cut');
    assert.ok(text.length < 2_000, `bounded: ${text.length} characters`);
  });

  it('still suggests close names for a typo, among 1,000 tools', async () => {
    const result = await face().call('use_tool', { toolbox_name: 'big', tool_name: 'big__many__gen_00O1' });
    assert.equal(workbenchErrorCode(result), 'TOOL_NOT_FOUND');
    assert.match(textOf(result), /Closest names: big__many__gen_0001/);
  });

  it('refuses management names that are too long or hold control characters', async () => {
    for (const args of [{ disable: [MEGABYTE_NAME] }, { enable: [`big__many__gen_0001\n${FORGED}`] }, { disable: new Array(1001).fill('big__*') }]) {
      const text = await refused(face(), 'enable_tools', args);
      assert.ok(text.length < SHORT, `short: ${text.length}`);
      assert.ok(!text.includes('\n'));
    }
  });
}

describe('hostile names over stdio', () => {
  let wb: RunningWorkbench;
  before(async () => {
    wb = await startWorkbench(config, { args: ['--management-tools'] });
  });
  after(() => wb.close());
  checks(() => ({ call: (name, args) => wb.call(name, args), stderr: () => wb.stderr() }));
});

describe('hostile names over HTTP', () => {
  const token = randomBytes(16).toString('hex');
  let wb: HttpWorkbench;
  let session: HttpSession;
  let client: Client;
  before(async () => {
    wb = await startHttpWorkbench(config, ['--http', '127.0.0.1:0', '--management-tools'], { WORKBENCH_TOKEN: token });
    session = await wb.connect({ authorization: `Bearer ${token}` });
    client = session.client;
  });
  after(async () => {
    await session.close();
    await wb.stop();
  });
  checks(() => ({ call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>, stderr: () => wb.stderr() }));
});

describe('bounded suggestions and quoting', () => {
  it('boundedEditDistance agrees with editDistance up to its bound', () => {
    const alphabet = 'ab_-';
    const word = (n: number): string => Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
    for (let k = 0; k < 2000; k++) {
      const a = word(Math.floor(Math.random() * 9));
      const b = word(Math.floor(Math.random() * 9));
      const max = Math.floor(Math.random() * 5);
      const exact = editDistance(a, b);
      assert.equal(boundedEditDistance(a, b, max), exact <= max ? exact : max + 1, `${a} / ${b} / ${max}`);
    }
  });

  it('quoteClientText escapes and cuts', () => {
    assert.equal(quoteClientText('dev'), '"dev"');
    assert.equal(quoteClientText('a\nb\u0085'), '"a\\nb\\u0085"');
    assert.equal(quoteClientText('x'.repeat(100), 4), '"xxxx…" (100 characters)');
  });
});
