import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { within } from '../../src/shared/within.js';

describe('within (a promise or a time limit)', () => {
  it('gives the value of a promise that settles in time', async () => {
    assert.deepEqual(await within(Promise.resolve(7), 1_000), { value: 7 });
    // An undefined value is still a value: it is told apart from running out of time.
    assert.deepEqual(await within(Promise.resolve(undefined), 1_000), { value: undefined });
  });

  it('gives undefined when time runs out, and leaves the promise running', async () => {
    let settle!: (v: string) => void;
    const slow = new Promise<string>((resolve) => (settle = resolve));
    assert.equal(await within(slow, 5), undefined);
    settle('later');
    assert.equal(await slow, 'later');
  });

  it('passes a rejection through, and treats a negative time as none left', async () => {
    await assert.rejects(within(Promise.reject(new Error('boom')), 1_000), /boom/);
    assert.equal(await within(new Promise(() => {}), -5), undefined);
  });
});
