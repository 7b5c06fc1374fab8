/**
 * A reason as a sentence of its own, so that what follows it (a hint, a note) does not read as its continuation: a
 * full stop is added unless it ends with one (or `!`, `?`) already. A closing parenthesis does not end a sentence
 * ("… (HTTP 401)" gets its full stop). Text of several lines ends with quoted output (a stderr tail), which is left as
 * it was written.
 */
export function asSentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.!?]$/.test(trimmed) || trimmed.includes('\n') ? trimmed : `${trimmed}.`;
}
