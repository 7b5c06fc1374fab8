import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Tool } from '@modelcontextprotocol/client';
import { MAX_SCHEMAS_PER_AJV, ToolValidators } from '../../src/core/validators.js';
import { createLogger } from '../../src/log.js';

/**
 * Over `serve --http` every session lists its servers' tools afresh: new tool objects with the schemas the last session
 * saw (README "Serving over HTTP", Servers per session). The validators of a long-running workbench must not grow with
 * sessions: a schema already compiled is not compiled again, and after many distinct schemas a fresh compiler takes
 * over while the validators already handed out keep working.
 */
const log = createLogger({ level: 'error', write: () => {} });
const echo = (): Tool => ({
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  outputSchema: { type: 'object', properties: { echoed: { type: 'string' } } },
});

describe('tool validators across sessions', () => {
  it('compiles a schema listed again by every new session once', () => {
    const validators = new ToolValidators(log);
    const first = validators.input(echo());
    assert.ok(first, 'the schema compiles');
    for (let session = 0; session < 200; session++) {
      const tool = echo();
      assert.equal(validators.input(tool), first, `session ${session}: the same validator, not another compile`);
      assert.equal(validators.input(tool), first, 'kept per tool object too');
    }
    assert.equal(first({ text: 'hi' }), true);
    assert.equal(first({ text: 1 }), false);
  });

  it('keeps every validator working when more distinct schemas than one compiler keeps have been seen', () => {
    const validators = new ToolValidators(log);
    const tool = (i: number): Tool => ({ name: `t${i}`, inputSchema: { type: 'object', properties: { [`p${i}`]: { type: 'integer' } }, required: [`p${i}`] } });
    const compiled = Array.from({ length: MAX_SCHEMAS_PER_AJV + 5 }, (_, i) => validators.input(tool(i))!);
    for (const i of [0, 1, MAX_SCHEMAS_PER_AJV - 1, MAX_SCHEMAS_PER_AJV, MAX_SCHEMAS_PER_AJV + 4]) {
      assert.equal(compiled[i]!({ [`p${i}`]: 3 }), true, `schema ${i} accepts its argument`);
      assert.equal(compiled[i]!({ [`p${i}`]: 'x' }), false, `schema ${i} refuses a wrong type`);
    }
  });

  it('forwards unchecked a schema that cannot be compiled, each time it is listed', () => {
    const validators = new ToolValidators(log);
    const broken = (): Tool => ({ name: 'bad', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '([' } } } });
    assert.equal(validators.input(broken()), null);
    assert.equal(validators.input(broken()), null);
    assert.equal(validators.output(echo())!({ echoed: 'x' }), true);
  });
});
