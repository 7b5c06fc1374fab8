/**
 * The one way a bounded list says what it left out: the first entries, then one entry made by `rest` that counts the
 * others (`(12 more)`, or an object saying where to see them all). Used wherever an answer to a client or a model
 * could otherwise grow with the number of tools, servers or names.
 */
export function firstOf<T>(list: readonly T[], count: number, rest: (left: number, firstLeft: T) => T): T[] {
  if (list.length <= count) return [...list];
  return [...list.slice(0, count), rest(list.length - count, list[count]!)];
}

/** The plain `(N more)` entry of a list of strings. */
export const moreCount = (left: number): string => `(${left} more)`;
