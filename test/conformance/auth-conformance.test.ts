import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { node } from '../helpers/workbench-process.js';

/**
 * The MCP conformance suite's `auth/*` client scenarios, every spec version each is tagged with and the extensions,
 * with the built workbench as the OAuth client of each scenario's server (`npm run conformance -- --auth`). Needs the
 * npm registry: the suite and a Node 22 to run it are fetched with npx into the npm cache (the project stays on
 * Node 20). About three minutes on two cores.
 */
const script = fileURLToPath(new URL('../../scripts/conformance.mjs', import.meta.url));

describe('conformance: auth/* client scenarios', () => {
  it('every run passes', { timeout: 20 * 60_000 }, async () => {
    const child = spawn(node, [script, '--auth'], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, output);
    assert.match(output, /auth\/\* client scenarios: (\d+)\/\1 runs passed/, output);
  });
});
