/**
 * Editing JSON text in place: a parse that keeps the position of every key and value, and edits (rename a key,
 * remove members, insert a member) applied to the original text. `migrate` uses it so a file keeps its formatting,
 * comment keys and key order, and the diff it prints shows only what changed.
 */

export type JsonNode = JsonObjectNode | JsonArrayNode | JsonScalarNode;

export interface JsonObjectNode {
  kind: 'object';
  /** Offset of `{`. */
  start: number;
  /** Offset just after `}`. */
  end: number;
  members: JsonMember[];
}

export interface JsonArrayNode {
  kind: 'array';
  start: number;
  end: number;
  items: JsonNode[];
}

export interface JsonScalarNode {
  kind: 'scalar';
  start: number;
  end: number;
}

export interface JsonMember {
  key: string;
  /** Offsets of the key's quoted string. */
  keyStart: number;
  keyEnd: number;
  value: JsonNode;
}

/** Replace `text.slice(start, end)` with `text`. */
export interface TextEdit {
  start: number;
  end: number;
  text: string;
}

/**
 * Parses JSON text that `JSON.parse` has already accepted, keeping offsets. Returns undefined when an object has
 * the same key twice: `JSON.parse` keeps the last one, so offsets of "the member called X" would be ambiguous and
 * callers fall back to re-serialising.
 *
 * @throws Error on text that is not JSON (callers parse with `parseConfigJson` first, which explains the error).
 */
export function parseJsonTree(text: string): JsonNode | undefined {
  let i = 0;
  let duplicate = false;
  const fail = (): never => {
    throw new Error(`not JSON at offset ${i}`);
  };
  const space = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const string = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail();
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): JsonNode => {
    space();
    const start = i;
    const ch = text[i];
    if (ch === '{') {
      i++;
      const members: JsonMember[] = [];
      const seen = new Set<string>();
      space();
      if (text[i] === '}') {
        i++;
        return { kind: 'object', start, end: i, members };
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail();
        const keyStart = i;
        const key = string();
        const keyEnd = i;
        if (seen.has(key)) duplicate = true;
        seen.add(key);
        space();
        if (text[i] !== ':') fail();
        i++;
        members.push({ key, keyStart, keyEnd, value: value() });
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { kind: 'object', start, end: i, members };
        }
        fail();
      }
    }
    if (ch === '[') {
      i++;
      const items: JsonNode[] = [];
      space();
      if (text[i] === ']') {
        i++;
        return { kind: 'array', start, end: i, items };
      }
      for (;;) {
        items.push(value());
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { kind: 'array', start, end: i, items };
        }
        fail();
      }
    }
    if (ch === '"') {
      string();
      return { kind: 'scalar', start, end: i };
    }
    while (i < text.length && /[-+0-9.eEa-z]/.test(text[i]!)) i++;
    if (i === start) fail();
    return { kind: 'scalar', start, end: i };
  };
  const root = value();
  space();
  if (i !== text.length) fail();
  return duplicate ? undefined : root;
}

/** The node at `path` (object keys), or undefined when some step is missing or not an object. */
export function nodeAt(root: JsonNode, path: readonly string[]): JsonNode | undefined {
  let node: JsonNode | undefined = root;
  for (const key of path) {
    if (node?.kind !== 'object') return undefined;
    node = node.members.find((m) => m.key === key)?.value;
  }
  return node;
}

/** The member `path[last]` of the object at `path[0..last)`. */
export function memberAt(root: JsonNode, path: readonly string[]): JsonMember | undefined {
  const parent = nodeAt(root, path.slice(0, -1));
  return parent?.kind === 'object' ? parent.members.find((m) => m.key === path[path.length - 1]) : undefined;
}

export function renameKeyEdit(member: JsonMember, newKey: string): TextEdit {
  return { start: member.keyStart, end: member.keyEnd, text: JSON.stringify(newKey) };
}

/**
 * Edits that remove the given members of one object, with their commas and the whitespace that led to them, so the
 * remaining members keep their lines and indentation.
 */
export function removeMembersEdits(object: JsonObjectNode, keys: ReadonlySet<string>): TextEdit[] {
  const { members } = object;
  const removed = members.map((m) => keys.has(m.key));
  if (removed.every(Boolean)) {
    return [{ start: object.start + 1, end: object.end - 1, text: '' }];
  }
  const edits: TextEdit[] = [];
  let index = 0;
  while (index < members.length) {
    if (!removed[index]) {
      index++;
      continue;
    }
    let last = index;
    while (last + 1 < members.length && removed[last + 1]) last++;
    if (last + 1 < members.length) {
      // A run followed by a kept member: remove up to where that member's key starts.
      edits.push({ start: members[index]!.keyStart, end: members[last + 1]!.keyStart, text: '' });
    } else {
      // A run at the end: remove from the end of the kept member before it (its comma goes too).
      edits.push({ start: members[index - 1]!.value.end, end: members[last]!.value.end, text: '' });
    }
    index = last + 1;
  }
  return edits;
}

/**
 * An edit that appends members to an object, formatted like their siblings: the indentation of the last member (or
 * one `unit` deeper than the object's line when it is empty), values serialised with `unit` per level. A one-line
 * object stays on one line.
 */
export function insertMembersEdit(text: string, object: JsonObjectNode, entries: readonly (readonly [string, unknown])[], unit: string): TextEdit {
  const last = object.members[object.members.length - 1];
  if (last) {
    if (!text.slice(object.start, last.keyStart).includes('\n')) {
      const added = entries.map(([key, value]) => `, ${JSON.stringify(key)}: ${JSON.stringify(value)}`).join('');
      return { start: last.value.end, end: last.value.end, text: added };
    }
    const indent = lineIndent(text, last.keyStart);
    const added = entries.map(([key, value]) => `,\n${indent}${JSON.stringify(key)}: ${serialise(value, unit, indent)}`).join('');
    return { start: last.value.end, end: last.value.end, text: added };
  }
  const outer = lineIndent(text, object.start);
  const inner = outer + unit;
  const body = entries.map(([key, value]) => `${inner}${JSON.stringify(key)}: ${serialise(value, unit, inner)}`).join(',\n');
  return { start: object.start, end: object.end, text: `{\n${body}\n${outer}}` };
}

/**
 * `value` as JSON indented by `unit`, its continuation lines starting at `indent`. Like `JSON.stringify(value, null,
 * unit)`, except that a short array of strings, numbers and booleans stays on one line (`"args": ["-y", "pkg"]`),
 * the way people write configs by hand.
 */
export function serialise(value: unknown, unit: string, indent = ''): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const inner = indent + unit;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((item) => item === null || typeof item !== 'object')) {
      const oneLine = `[${value.map((item) => JSON.stringify(item) ?? 'null').join(', ')}]`;
      if (indent.length + oneLine.length <= 100) return oneLine;
    }
    return `[\n${value.map((item) => inner + serialise(item, unit, inner)).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, item]) => item !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${serialise(item, unit, inner)}`).join(',\n')}\n${indent}}`;
}

/**
 * Applies non-overlapping edits to `text` (edits may touch: one ending where another starts).
 *
 * @throws Error when two edits overlap (a bug in the caller, never a property of the input).
 */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  let limit = Infinity;
  for (const edit of sorted) {
    if (edit.end > limit) throw new Error(`overlapping edits at offset ${edit.start}`);
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
    limit = edit.start;
  }
  return out;
}

/** The indentation unit a file uses (its first indented line), else two spaces. */
export function detectIndent(text: string): string {
  const match = /\n([ \t]+)\S/.exec(text);
  if (!match) return '  ';
  const indent = match[1]!;
  return indent.startsWith('\t') ? '\t' : indent.length >= 2 && indent.length <= 8 ? indent : '  ';
}

/** The whitespace at the start of the line that holds `offset`. */
function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}
