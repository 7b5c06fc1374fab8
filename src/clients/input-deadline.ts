import { SdkError, SdkErrorCode, type Progress } from '@modelcontextprotocol/client';
import { Cancellation } from '../shared/cancellation.js';
import type { ChannelCallOptions } from './call-channel.js';

/** When a call began and when the server last reported progress on it (0: never). */
export interface CallClock {
  startedAt: number;
  movedAt: number;
}

/** A clock for a call starting now, and its progress listener that moves the clock (undefined without `onprogress`). */
export function startClock(onprogress: ((progress: Progress) => void) | undefined): { clock: CallClock; onprogress: ((progress: Progress) => void) | undefined } {
  const clock: CallClock = { startedAt: Date.now(), movedAt: 0 };
  if (!onprogress) return { clock, onprogress };
  return {
    clock,
    onprogress: (progress) => {
      clock.movedAt = Date.now();
      onprogress(progress);
    },
  };
}

/**
 * The bound of a modern server's call that asks the client for input (README "Timeouts"): the whole call, its rounds
 * of input included, ends `timeoutMs` after it began, or after the server's last progress, never later than
 * `maxTotalMs` after it began — as any call does. {@link cancellation} follows the caller's and is cancelled at the
 * deadline too, with the SDK's own timeout error: the relayed request waiting for the client is withdrawn
 * (`notifications/cancelled`) and a retry in flight is cancelled downstream.
 */
export class InputDeadline {
  readonly cancellation = new Cancellation();
  private timer: NodeJS.Timeout | undefined;
  private readonly hardDeadline: number;
  private readonly follow = (reason: unknown): void => this.cancellation.cancel(reason);

  constructor(
    private readonly clock: CallClock,
    private readonly timeoutMs: number,
    maxTotalMs: number,
    private readonly parent: Cancellation | undefined,
  ) {
    this.hardDeadline = clock.startedAt + maxTotalMs;
    parent?.onCancel(this.follow);
    this.arm();
  }

  /** Whether the call ran out of time (as opposed to being cancelled by its caller, or completing). */
  get expired(): boolean {
    return this.cancellation.cancelled && this.cancellation.reason instanceof SdkError && this.cancellation.reason.code === SdkErrorCode.RequestTimeout;
  }

  /** The channel options of a retry: cancelled at the deadline, its progress moving the deadline. */
  retryOptions(channel: ChannelCallOptions): ChannelCallOptions {
    const onprogress = channel.onprogress;
    return {
      ...channel,
      cancellation: this.cancellation,
      onprogress:
        onprogress &&
        ((progress) => {
          this.clock.movedAt = Date.now();
          onprogress(progress);
        }),
    };
  }

  /** Stops the clock (the call ended). */
  dispose(): void {
    clearTimeout(this.timer);
    this.parent?.offCancel(this.follow);
  }

  private deadline(): number {
    return Math.min(Math.max(this.clock.startedAt, this.clock.movedAt) + this.timeoutMs, this.hardDeadline);
  }

  private arm(): void {
    if (this.cancellation.cancelled) return;
    const left = this.deadline() - Date.now();
    if (left <= 0) {
      this.cancellation.cancel(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: this.timeoutMs }));
      return;
    }
    this.timer = setTimeout(() => this.arm(), left);
    this.timer.unref();
  }
}
