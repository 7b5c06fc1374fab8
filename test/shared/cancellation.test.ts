import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cancellation } from '../../src/shared/cancellation.js';

describe('Cancellation', () => {
  it('tells every listener once, in order, and one added later at once', () => {
    const c = new Cancellation();
    const heard: string[] = [];
    c.onCancel((r) => heard.push(`first:${String(r)}`));
    c.onCancel((r) => heard.push(`second:${String(r)}`));
    c.onCancel((r) => heard.push(`third:${String(r)}`));
    c.cancel('stop');
    c.cancel('again');
    c.onCancel((r) => heard.push(`late:${String(r)}`));
    assert.deepEqual(heard, ['first:stop', 'second:stop', 'third:stop', 'late:stop']);
    assert.equal(c.cancelled, true);
    assert.equal(c.reason, 'stop');
  });

  it('removes one listener without touching the others', () => {
    const c = new Cancellation();
    const heard: string[] = [];
    const a = (): void => void heard.push('a');
    const b = (): void => void heard.push('b');
    c.onCancel(a);
    c.onCancel(b);
    c.onCancel(a);
    c.offCancel(a);
    c.cancel(undefined);
    assert.deepEqual(heard, ['b', 'a']);
  });

  it('follows an AbortSignal', () => {
    const controller = new AbortController();
    const c = Cancellation.from(controller.signal)!;
    controller.abort('bye');
    assert.equal(c.reason, 'bye');
  });
});
