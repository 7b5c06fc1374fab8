/**
 * `promise`'s value when it settles within `ms` (as `{ value }`), else undefined; the promise itself keeps running.
 * A rejection within the time passes through. The timer is cleared either way, so nothing waits on it afterwards.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms), undefined)));
  try {
    return await Promise.race([promise.then((value) => ({ value })), late]);
  } finally {
    clearTimeout(timer);
  }
}
