/**
 * A one-shot cancellation for a forwarded call. It does what an AbortSignal does for one listener, without the
 * EventTarget machinery, which costs more per call than the rest of forwarding (measured: about 18 µs of 176 µs per
 * call at concurrency 1). An AbortSignal from the SDK (the HTTP path) is adapted with {@link Cancellation.from}.
 */
export class Cancellation {
  private listener: ((reason: unknown) => void) | undefined;
  private state: { reason: unknown } | undefined;

  get cancelled(): boolean {
    return this.state !== undefined;
  }

  get reason(): unknown {
    return this.state?.reason;
  }

  /** Cancels once; later calls do nothing. */
  cancel(reason: unknown): void {
    if (this.state) return;
    this.state = { reason };
    const listener = this.listener;
    this.listener = undefined;
    listener?.(reason);
  }

  /** Sets the one listener (replacing any); called at once if already cancelled. `undefined` removes it. */
  onCancel(listener: ((reason: unknown) => void) | undefined): void {
    if (this.state && listener) listener(this.state.reason);
    else this.listener = listener;
  }

  /** Follows an AbortSignal (or nothing). */
  static from(signal: AbortSignal | undefined): Cancellation | undefined {
    if (!signal) return undefined;
    const cancellation = new Cancellation();
    if (signal.aborted) cancellation.cancel(signal.reason);
    else signal.addEventListener('abort', () => cancellation.cancel(signal.reason), { once: true });
    return cancellation;
  }
}
