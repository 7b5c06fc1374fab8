import { SyntaxKind, applyEdits, createScanner, findNodeAtLocation, format, modify, parseTree, type FormattingOptions } from 'jsonc-parser';

/**
 * Editing JSON text in place with jsonc-parser (`modify` + `applyEdits`): each function changes one member and keeps
 * every other byte, so `migrate` leaves a file's formatting, comment keys and key order alone and its diff shows only
 * what changed. Paths are object keys from the root. A path that does not exist leaves the text unchanged; callers
 * compare the result with the document they expect (e.g. duplicate keys make "the member called X" ambiguous).
 */

/** The file's indentation (its first indented line; tab or 2–8 spaces, else two spaces) and line ending. */
export function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  if (indent.startsWith('\t')) return { insertSpaces: false, tabSize: 1, eol };
  return { insertSpaces: true, tabSize: indent.length >= 2 && indent.length <= 8 ? indent.length : 2, eol };
}

/** Renames the key of the member at `path` (jsonc-parser has no rename: the key's string is replaced). */
export function renameKey(text: string, path: readonly string[], newKey: string): string {
  const tree = parseTree(text);
  const key = tree && findNodeAtLocation(tree, [...path])?.parent?.children?.[0];
  return key ? applyEdits(text, [{ offset: key.offset, length: key.length, content: JSON.stringify(newKey) }]) : text;
}

/**
 * Removes the member at `path` with its comma, by one rule (README "Command line", Setting up): what goes is the
 * member itself, its comma (the one after it, else — for the last member — the one before it) and a comment on the
 * same line after it; comments on lines of their own, above or below, stay — one above a first member often describes
 * the whole file. A member on lines of its own goes with those lines; one sharing a line goes with the spaces after
 * it. Trailing commas are fine (the config is JSONC). Every other byte stays.
 */
export function removeMember(text: string, path: readonly string[]): string {
  const property = findValue(text, path)?.parent;
  const siblings = property?.parent?.children;
  if (property?.type !== 'property' || !siblings) return text;
  const at = siblings.indexOf(property);
  let start = property.offset;
  let end = property.offset + property.length;
  const comma = commaAfter(text, end);
  let before: { offset: number; length: number } | undefined;
  if (comma !== undefined) end = comma + 1;
  else if (at > 0) {
    // The last member without a trailing comma: the comma before it goes instead.
    const previous = siblings[at - 1]!;
    const previousComma = commaAfter(text, previous.offset + previous.length);
    if (previousComma !== undefined) before = { offset: previousComma, length: 1 };
  }
  end = sameLineComment(text, end);
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const lineEnd = text.indexOf('\n', end);
  const ownLines = /^[ \t]*$/.test(text.slice(lineStart, start)) && /^[ \t\r]*$/.test(text.slice(end, lineEnd === -1 ? text.length : lineEnd));
  if (ownLines && lineEnd !== -1) {
    start = lineStart;
    end = lineEnd + 1;
  } else if (before && before.offset + 1 === text.slice(0, start).trimEnd().length) {
    // `, "b": 2` on one line: the comma before and the space between go with it.
    start = before.offset;
    before = undefined;
  } else {
    end += /^[ \t]*/.exec(text.slice(end))![0].length;
  }
  const edits = [{ offset: start, length: end - start, content: '' }];
  if (before) edits.unshift({ ...before, content: '' });
  return applyEdits(text, edits);
}

/** The offset of the comma after `offset` with only whitespace and comments between, if there is one. */
function commaAfter(text: string, offset: number): number | undefined {
  const scanner = createScanner(text, false);
  scanner.setPosition(offset);
  for (;;) {
    const kind = scanner.scan();
    if (kind === SyntaxKind.CommaToken) return scanner.getTokenOffset();
    if (kind !== SyntaxKind.Trivia && kind !== SyntaxKind.LineBreakTrivia && kind !== SyntaxKind.LineCommentTrivia && kind !== SyntaxKind.BlockCommentTrivia) return undefined;
  }
}

/** Past a comment that follows `offset` on the same line (a `/* … *\/` only if it ends on that line), else `offset`. */
function sameLineComment(text: string, offset: number): number {
  const scanner = createScanner(text, false);
  scanner.setPosition(offset);
  let kind = scanner.scan();
  if (kind === SyntaxKind.Trivia) kind = scanner.scan();
  const comment = kind === SyntaxKind.LineCommentTrivia || (kind === SyntaxKind.BlockCommentTrivia && !text.slice(scanner.getTokenOffset(), scanner.getPosition()).includes('\n'));
  return comment ? scanner.getPosition() : offset;
}

/**
 * Appends the member `key: value` to the object at `path`, laid out like the file: in a multi-line (or empty) object
 * on its own lines with `formatting`'s indentation; in a one-line object on the same line. Only the inserted text is
 * formatted, never its neighbours.
 */
export function insertMember(text: string, path: readonly string[], key: string, value: unknown, formatting: FormattingOptions): string {
  const parent = findValue(text, path);
  if (parent?.type !== 'object') return text;
  const last = parent.children?.[parent.children.length - 1];
  const tail = last && lineTail(text, last.offset + last.length);
  if (!tail) return appendMember(text, path, key, value, formatting, parent);
  // The last member's comma and the comment on its line stay with it: jsonc-parser would put the new member between
  // them (its comma before ours, the comment on the new member's line). Inserted without them, then put back.
  const end = last.offset + last.length;
  const without = text.slice(0, end) + text.slice(tail.end);
  const inserted = appendMember(without, path, key, value, formatting, findValue(without, path)!);
  if (inserted[end] !== ',') return inserted; // not laid out as expected: the caller's check refuses the edit
  let out = `${inserted.slice(0, end)},${tail.comment}${inserted.slice(end + 1)}`;
  if (tail.comma) {
    // The file ends its members with a comma: so does the new last one.
    const added = findValue(out, [...path, key])?.parent;
    if (added) out = applyEdits(out, [{ offset: added.offset + added.length, length: 0, content: ',' }]);
  }
  return out;
}

/**
 * What follows a member on its line: a comma (a trailing one, for the last member) and a comment, up to `end`;
 * `comment` is that text without the comma. Undefined when neither is there.
 */
function lineTail(text: string, offset: number): { end: number; comma: boolean; comment: string } | undefined {
  const comma = /^[ \t]*,/.exec(text.slice(offset));
  const afterComma = comma ? offset + comma[0].length : offset;
  const end = sameLineComment(text, afterComma);
  if (!comma && end === afterComma) return undefined;
  return { end, comma: comma !== null, comment: text.slice(afterComma, end) };
}

function appendMember(text: string, path: readonly string[], key: string, value: unknown, formatting: FormattingOptions, parent: NonNullable<ReturnType<typeof findValue>>): string {
  const multiLine = !parent.children?.length || text.slice(parent.offset, parent.offset + parent.length).includes('\n');
  let out = text;
  for (const edit of modify(text, [...path, key], value, {})) {
    out = applyEdits(out, [edit]);
    const start = edit.offset;
    const end = edit.offset + edit.content.length;
    // The range reaches one character past each end so the breaks after `{` and before `}` are laid out too.
    const layout = format(out, { offset: start - 1, length: end - start + 2 }, { ...formatting, keepLines: !multiLine });
    out = applyEdits(out, layout.filter((e) => e.offset >= start && e.offset + e.length <= end));
  }
  return out;
}

function findValue(text: string, path: readonly string[]): ReturnType<typeof findNodeAtLocation> {
  const tree = parseTree(text);
  return tree && findNodeAtLocation(tree, [...path]);
}
