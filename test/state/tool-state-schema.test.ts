import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { readToolState, serialize } from '../../src/state/read.js';
import { createLogger } from '../../src/log.js';

/** The tool state file's JSON Schema (for editors) and the reader agree on what a valid file is. */

const read = async (name: string): Promise<Record<string, unknown>> => JSON.parse(await readFile(new URL(`../../${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;

describe('mcp-workbench-tool-state.schema.json', () => {
  it('compiles without ajv strict-mode warnings, documents every key, and is shipped', async () => {
    const schema = await read('mcp-workbench-tool-state.schema.json');
    const warnings: unknown[] = [];
    const logger = { log: () => {}, warn: (...args: unknown[]) => warnings.push(args), error: (...args: unknown[]) => warnings.push(args) };
    new Ajv({ allErrors: true, logger }).compile(schema);
    assert.deepEqual(warnings, []);
    for (const [key, property] of Object.entries(schema.properties as Record<string, { description?: string }>)) assert.ok(property.description, `${key} has a description`);
    assert.ok(((await read('package.json')).files as string[]).includes('mcp-workbench-tool-state.schema.json'));
  });

  it('accepts what the workbench writes and "version": 1; a file of another version is refused by both', async () => {
    const validate = new Ajv({ allErrors: true }).compile(await read('mcp-workbench-tool-state.schema.json'));
    const dir = await mkdtemp(join(tmpdir(), 'wb-state-schema-'));
    const log = createLogger({ level: 'error', write: () => {} });
    try {
      const written = serialize({ enabled: [], disabled: ['dev__memory__delete_*'], exceptions: ['dev__memory__delete_one'] });
      assert.ok(validate(JSON.parse(written)), JSON.stringify(validate.errors));
      for (const [text, valid] of [
        ['{"version": 1, "enabled": [], "disabled": ["a__b__c"]}', true],
        ['{"version": 2, "enabled": [], "disabled": [], "rules": [{"disable": "a__b__c"}]}', false],
      ] as const) {
        assert.equal(validate(JSON.parse(text)), valid, text);
        const path = join(dir, 'tool-state.json');
        await writeFile(path, text);
        const result = await readToolState(path, log);
        if (valid) assert.deepEqual(result.state?.disabled, ['a__b__c']);
        else {
          assert.equal(result.problem?.code, 'STATE_INVALID');
          assert.match(result.problem?.message ?? '', /says "version": 2, a format this workbench does not know/);
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
