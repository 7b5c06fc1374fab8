import assert from 'node:assert/strict';

/** How long to wait, and (to fail the test by itself) what for. */
export interface WaitLimit {
  timeoutMs: number;
  /** Named in the failure when the condition never holds. */
  what: string;
}

/**
 * Polls `condition` (every 50 ms) until it holds or the time is up: the way a test waits for something to happen,
 * instead of sleeping a fixed time. With a number of milliseconds it returns whether the condition held, for
 * `assert.ok(await waitFor(…), message)`; with `{ timeoutMs, what }` it fails the test naming `what` if it never does.
 */
export function waitFor(condition: () => boolean | Promise<boolean>, ms: number): Promise<boolean>;
export function waitFor(condition: () => boolean | Promise<boolean>, limit: WaitLimit): Promise<void>;
export async function waitFor(condition: () => boolean | Promise<boolean>, limit: number | WaitLimit): Promise<boolean | void> {
  const ms = typeof limit === 'number' ? limit : limit.timeoutMs;
  const deadline = Date.now() + ms;
  let held = await condition();
  while (!held && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    held = await condition();
  }
  if (typeof limit === 'number') return held;
  assert.ok(held, `timed out after ${ms} ms waiting for ${limit.what}`);
}
