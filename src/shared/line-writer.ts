import type { JSONRPCMessage } from '@modelcontextprotocol/client';

/**
 * Newline-delimited JSON-RPC out of a stream, for the forwarding hot path:
 * - messages written in the same tick (many calls in flight) leave in one `write`, since a system call per message
 *   is the largest cost of a small message; nothing waits longer than the current tick;
 * - `write` is synchronous and allocates no promise: a forwarded call or reply needs no acknowledgement, only the
 *   SDK's `Transport.send` contract does (see `ready`).
 * Write errors (EPIPE when the reader went away) surface as the stream's 'error' event, which the owner handles.
 */
export class LineWriter {
  /** What this tick has written so far (one string: cheaper than an array for the usual single message). */
  private pending = '';
  private scheduled = false;
  /** Senders waiting for 'drain' (one listener for all of them). */
  private waiters: (() => void)[] | undefined;

  constructor(private readonly stream: NodeJS.WritableStream & { readonly writableNeedDrain?: boolean }) {}

  /** Serialises the message and queues it for the end of this tick. */
  write(message: JSONRPCMessage | Record<string, unknown>): void {
    this.pending += `${JSON.stringify(message)}\n`;
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(this.flush);
  }

  /** Queues a message already serialised as JSON text (one line: JSON.stringify's output has no newline). */
  writeText(text: string): void {
    this.pending += `${text}\n`;
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(this.flush);
  }

  /** Resolves when the stream can take more (at once unless it is over its high-water mark): backpressure for `send`. */
  ready(): Promise<void> {
    if (!this.stream.writableNeedDrain) return Promise.resolve();
    if (!this.waiters) {
      const waiters: (() => void)[] = [];
      this.waiters = waiters;
      const done = (): void => {
        this.stream.off('drain', done);
        this.stream.off('close', done);
        this.waiters = undefined;
        for (const resolve of waiters) resolve();
      };
      this.stream.on('drain', done);
      // A stream that fails or closes never drains: do not leave the senders waiting.
      this.stream.on('close', done);
    }
    const waiters = this.waiters;
    return new Promise((resolve) => waiters.push(resolve));
  }

  /** Writes what this tick has queued now (before ending the stream, so nothing queued is lost). */
  readonly flush = (): void => {
    this.scheduled = false;
    const text = this.pending;
    if (text === '') return;
    this.pending = '';
    this.stream.write(text);
  };
}
