/**
 * A cap on a log line that can repeat without end (noise a server prints, refused requests): within a window, the
 * first occurrences of each key get a line of their own and the rest are only counted, so the log says "N more"
 * once instead of N lines. A window starts at the first occurrence after the last one ended, and lasts `windowMs`.
 */
export interface RepeatWindowOptions<K> {
  windowMs: number;
  /** Occurrences of one key that get a line of their own in a window. */
  linesPerKey: number;
  /** Keys told apart in a window (memory stays bounded); occurrences of keys past them are counted as `others`. */
  maxKeys: number;
  /** The clock, in milliseconds; defaults to Date.now. */
  now?: () => number;
  /**
   * Told what a window held back when it ends with no occurrence after it to say so: given this, a window that holds
   * an occurrence back arms a timer (unref'd: it never keeps the process alive) for its end, so a flood that stops is
   * still said then. `drain` stops the timer.
   */
  onEnded?: (held: HeldBack<K>) => void;
}

/** The occurrences of one window that got no line of their own. */
export interface HeldBack<K> {
  /** When the window started (the clock's milliseconds). */
  since: number;
  /** Occurrences counted, by key, largest first. */
  byKey: Array<[K, number]>;
  /** Occurrences of keys past `maxKeys`. */
  others: number;
  /** Every occurrence counted: the sum of byKey and others. */
  total: number;
}

export interface RepeatWindow<K> {
  /**
   * Whether this occurrence of `key` gets a line of its own (`line`), and what the window that ended before it held
   * back (`ended`, to be said first), if anything.
   */
  admit(key: K): { line: boolean; ended: HeldBack<K> | undefined };
  /**
   * What the current window held back, if anything; the window ends (the next occurrence starts another) and its
   * timer, if armed, is stopped: call it when the owner closes.
   */
  drain(): HeldBack<K> | undefined;
}

export function createRepeatWindow<K>(options: RepeatWindowOptions<K>): RepeatWindow<K> {
  const now = options.now ?? Date.now;
  let start: number | undefined;
  /** Per key told apart: lines given and occurrences held back. */
  let keys = new Map<K, { lines: number; held: number }>();
  let others = 0;
  let timer: NodeJS.Timeout | undefined;

  const drain = (): HeldBack<K> | undefined => {
    clearTimeout(timer);
    timer = undefined;
    const since = start;
    const byKey = [...keys].filter(([, k]) => k.held > 0).map(([key, k]) => [key, k.held] as [K, number]);
    const held = others;
    start = undefined;
    keys = new Map();
    others = 0;
    if (since === undefined || (byKey.length === 0 && held === 0)) return undefined;
    byKey.sort((a, b) => b[1] - a[1]);
    return { since, byKey, others: held, total: byKey.reduce((n, [, c]) => n + c, held) };
  };

  // Armed when the window first holds an occurrence back, to fire when it ends (in real time: `now` must keep it).
  const heldBack = (): void => {
    const onEnded = options.onEnded;
    if (onEnded === undefined || timer !== undefined || start === undefined) return;
    timer = setTimeout(() => {
      const held = drain();
      if (held !== undefined) onEnded(held);
    }, Math.max(0, start + options.windowMs - now()));
    timer.unref();
  };

  return {
    admit(key) {
      const at = now();
      const ended = start !== undefined && at - start >= options.windowMs ? drain() : undefined;
      start ??= at;
      let seen = keys.get(key);
      if (seen === undefined) {
        if (keys.size >= options.maxKeys) {
          others++;
          heldBack();
          return { line: false, ended };
        }
        seen = { lines: 0, held: 0 };
        keys.set(key, seen);
      }
      if (seen.lines < options.linesPerKey) {
        seen.lines++;
        return { line: true, ended };
      }
      seen.held++;
      heldBack();
      return { line: false, ended };
    },
    drain,
  };
}
