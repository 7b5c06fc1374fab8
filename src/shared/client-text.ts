/**
 * Bounds for what a client sends: names are checked before any lookup, and anything echoed back in a result or a
 * log is quoted, escaped and cut, so a hostile string can neither forge a log line nor make a huge answer.
 */

/** Longest name (toolbox, tool, pattern) the workbench accepts from a client. */
export const MAX_NAME_LENGTH = 256;

/** How much of a client string is echoed in a message or log line. */
export const MAX_ECHO_LENGTH = 80;

/**
 * Why a client-supplied name is refused, or undefined when it is acceptable: longer than {@link MAX_NAME_LENGTH},
 * or holding a control character (C0, DEL, C1, line and paragraph separators), which no tool or toolbox name has.
 * Constant time for normal names: one length check, then one pass over at most 256 characters, no allocation.
 */
export function nameProblem(name: string): string | undefined {
  if (name.length > MAX_NAME_LENGTH) return `is ${name.length} characters long; names are at most ${MAX_NAME_LENGTH}`;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029) {
      return `contains a control character (U+${c.toString(16).toUpperCase().padStart(4, '0')} at position ${i + 1}); names never do`;
    }
  }
  return undefined;
}

// Characters JSON.stringify leaves as they are but that can still disturb a terminal or a log reader: DEL and C1
// controls, line/paragraph separators, and bidirectional overrides (which can make text read differently).
const UNSAFE = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A client string cut to `max` characters with an ellipsis, unquoted (a name echoed in a structured answer). */
export function cutClientText(text: string, max = MAX_ECHO_LENGTH): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * A client string as it appears in a message or log: in double quotes, control characters escaped (`\n`,
 * `\u001b`, …), and cut to `max` characters with the full length said: `"aaaa…" (… 1048576 characters)`.
 */
export function quoteClientText(text: string, max = MAX_ECHO_LENGTH): string {
  const cut = text.length > max ? text.slice(0, max) : text;
  const quoted = JSON.stringify(cut).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return text.length > max ? `${quoted.slice(0, -1)}…" (${text.length} characters)` : quoted;
}
