import assert from 'node:assert/strict';
import { WorkbenchError, type WorkbenchErrorCode } from '../../src/errors.js';

/** Runs `fn`, which must throw a WorkbenchError with `code`; returns it for further checks. */
export function failure(fn: () => unknown, code: WorkbenchErrorCode): WorkbenchError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof WorkbenchError, `expected a WorkbenchError, got ${String(error)}`);
    assert.equal(error.code, code, error.toDisplayString());
    return error;
  }
  assert.fail(`expected ${code}`);
}

/** Awaits `promise`, which must reject with a WorkbenchError with `code`; returns it for further checks. */
export async function rejection(promise: Promise<unknown>, code: WorkbenchErrorCode): Promise<WorkbenchError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof WorkbenchError, `expected a WorkbenchError, got ${String(error)}`);
    assert.equal(error.code, code, error.toDisplayString());
    return error;
  }
  assert.fail(`expected ${code}`);
}
