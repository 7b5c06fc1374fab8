/**
 * Finding the id of a JSON-RPC message that is too large to parse, from its first and last bytes only. Writers put
 * the id in different places: the TypeScript SDK last (`…,"id":7}`), the Python SDK near the start
 * (`{"jsonrpc":"2.0","id":7,"result":…`), a client request usually before its params. Both ends are looked at; only
 * an `"id"` key of the top-level object counts, never one nested inside params or a result.
 */

/** How many bytes of each end of an oversized message are kept to look for its id. */
export const ID_SEARCH_BYTES = 512;

export type MessageId = string | number;

/** The top-level id of a message whose start is `head` and whose end is `tail`, or undefined if neither shows it. */
export function findMessageId(head: string, tail: string): MessageId | undefined {
  return idInHead(head) ?? idInTail(tail);
}

/** Scans from the start, tracking strings and nesting, for a key "id" directly inside the outermost object. */
function idInHead(text: string): MessageId | undefined {
  let depth = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      if (depth === 1 && text.slice(i, end + 1) === '"id"') {
        const value = /^\s*:\s*(-?\d+(?![\d.eE])|"(?:[^"\\]|\\.)*")/.exec(text.slice(end + 1));
        if (value) return parseId(value[1]!);
      }
      i = end + 1;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    i++;
  }
  return undefined;
}

/** The id as the last key of the outermost object: `"id": 7}` at the very end. */
function idInTail(text: string): MessageId | undefined {
  const match = /[,{]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(text);
  return match ? parseId(match[1]!) : undefined;
}

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '"') return i;
  }
  return -1;
}

function parseId(raw: string): MessageId | undefined {
  try {
    const id = JSON.parse(raw) as unknown;
    return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : undefined;
  } catch {
    return undefined;
  }
}
