import { type Edit, type Node, SyntaxKind, applyEdits, createScanner, modify } from 'jsonc-parser';
import type { ToolState } from '../catalog/visibility.js';
import { STATE_LISTS, listNode, parseStateText } from './parse.js';

/**
 * Changes the lists of a state file's text in place, so everything else the user wrote stays as it was: comments,
 * unknown keys, key order, layout. An entry that goes is removed with its line (and a comment on that same line);
 * a new entry is appended to its list in the list's style; a list the file lacks is added. Returns undefined when
 * the result would not read back as `next` (it then must be written another way).
 */
export function editStateText(text: string, next: ToolState): string | undefined {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  let current = text;
  for (const key of STATE_LISTS) {
    const want = next[key] ?? [];
    const wanted = new Set(want);
    // Remove the entries that go (and later copies of one that stays), last first so earlier indexes stay valid.
    for (;;) {
      const list = currentList(current, key);
      if (!list) break;
      const seen = new Set<string>();
      const doomed = (list.children ?? []).map((item) => {
        const name = String(item.value).trim();
        const drop = !wanted.has(name) || seen.has(name);
        seen.add(name);
        return drop;
      });
      const index = doomed.lastIndexOf(true);
      if (index < 0) break;
      current = applyEdits(current, removalEdits(current, list, index));
    }
    let list = currentList(current, key);
    if (list && (list.children ?? []).length === 0) current = collapseEmpty(current, list);
    const present = new Set((list?.children ?? []).map((item) => String(item.value).trim()));
    const missing = want.filter((name) => !present.has(name));
    if (missing.length === 0) continue;
    if (!list) current = applyEdits(current, [addListEdit(current, key, eol)]);
    for (const name of missing) {
      list = currentList(current, key);
      if (!list) return undefined;
      current = applyEdits(current, appendEdits(current, list, JSON.stringify(name), eol));
    }
  }
  const check = parseStateText(current);
  return check.ok && sameState(check.state, next) ? current : undefined;
}

/**
 * The fallback of {@link editStateText}: each list replaced whole by jsonc-parser (comments inside the lists are
 * lost; everything outside them stays). Undefined when even that does not read back as `next`.
 */
export function replaceLists(text: string, next: ToolState): string | undefined {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  let current = text;
  for (const key of STATE_LISTS) {
    const want = next[key] ?? [];
    // An optional list (exceptions) is not added empty.
    if (want.length === 0 && !currentList(current, key)) continue;
    current = applyEdits(current, modify(current, [key], [...want], { formattingOptions: { insertSpaces: true, tabSize: 2, eol } }));
  }
  const check = parseStateText(current);
  return check.ok && sameState(check.state, next) ? current : undefined;
}

function currentList(text: string, key: (typeof STATE_LISTS)[number]): Node | undefined {
  const parsed = parseStateText(text);
  if (!parsed.ok) return undefined;
  const list = listNode(parsed.tree, key);
  return list?.type === 'array' ? list : undefined;
}

/**
 * The edits that remove item `index` of `list`: the item and the comma after it; when it has a line of its own, that
 * whole line. For a last item without a trailing comma, the comma before it goes instead.
 */
function removalEdits(text: string, list: Node, index: number): Edit[] {
  const items = list.children ?? [];
  const item = items[index]!;
  const itemEnd = item.offset + item.length;
  const comma = nextSignificant(text, itemEnd);
  const ownsLine = /^[ \t]*$/.test(text.slice(lineStart(text, item.offset), item.offset));
  const after = comma.kind === SyntaxKind.CommaToken ? comma.offset + 1 : itemEnd;
  const lineEnd = restOfLineIsBlank(text, after);
  if (ownsLine && lineEnd !== undefined) {
    const edits: Edit[] = [{ offset: lineStart(text, item.offset), length: lineEnd - lineStart(text, item.offset), content: '' }];
    const previous = items[index - 1];
    if (comma.kind !== SyntaxKind.CommaToken && previous) {
      const before = nextSignificant(text, previous.offset + previous.length);
      if (before.kind === SyntaxKind.CommaToken) edits.unshift({ offset: before.offset, length: 1, content: '' });
    }
    return edits;
  }
  if (comma.kind === SyntaxKind.CommaToken) {
    // Inline: `"a", "b"` → `"b"`: the item, its comma and the spaces after it.
    let end = after;
    while (text[end] === ' ' || text[end] === '\t') end++;
    return [{ offset: item.offset, length: end - item.offset, content: '' }];
  }
  // Inline last item: `"a", "b"]` → `"a"]`: from the end of the previous item (its comma included) to this one's end.
  const previous = items[index - 1];
  if (!previous) return [{ offset: item.offset, length: item.length, content: '' }];
  const before = nextSignificant(text, previous.offset + previous.length);
  let start = item.offset;
  while (start > 0 && (text[start - 1] === ' ' || text[start - 1] === '\t')) start--;
  const edits: Edit[] = [{ offset: start, length: itemEnd - start, content: '' }];
  if (before.kind === SyntaxKind.CommaToken && before.offset < start) edits.unshift({ offset: before.offset, length: 1, content: '' });
  return edits;
}

/** The edit that adds `"key": []` as the root object's last property, in the file's style (own line or inline). */
function addListEdit(text: string, key: string, eol: string): Edit {
  const root = rootNode(text)!;
  const property = `${JSON.stringify(key)}: []`;
  const last = root.children?.[root.children.length - 1];
  const multiLine = text.slice(root.offset, root.offset + root.length).includes('\n');
  if (!last) {
    return { offset: root.offset + 1, length: 0, content: multiLine ? `${eol}${indentUnit(text, root)}${property}` : property };
  }
  const lastEnd = last.offset + last.length;
  const comma = nextSignificant(text, lastEnd);
  const trailing = comma.kind === SyntaxKind.CommaToken;
  const lineEnd = multiLine ? restOfLineIsBlank(text, trailing ? comma.offset + 1 : lastEnd) : undefined;
  if (lineEnd === undefined) return { offset: lastEnd, length: 0, content: `, ${property}` };
  const at = lineEnd - lineBreakLength(text, lineEnd);
  const content = `${eol}${indentOf(text, last.offset)}${property}${trailing ? ',' : ''}`;
  // Without a trailing comma, one goes after the last property (before any comment on its line).
  return trailing ? { offset: at, length: 0, content } : { offset: lastEnd, length: at - lastEnd, content: `,${text.slice(lastEnd, at)}${content}` };
}

/** The edits that append `item` (JSON text) to `list`, on a line of its own when the list has them. */
function appendEdits(text: string, list: Node, item: string, eol: string): Edit[] {
  const items = list.children ?? [];
  const last = items[items.length - 1];
  const close = list.offset + list.length - 1;
  const multiLine = text.slice(list.offset, list.offset + list.length).includes('\n');
  if (!last) {
    const inner = text.slice(list.offset + 1, close);
    if (inner.trim() === '') {
      const root = rootNode(text)!;
      if (!text.slice(root.offset, root.offset + root.length).includes('\n')) return [{ offset: list.offset + 1, length: inner.length, content: item }];
      const indent = indentOf(text, list.offset);
      return [{ offset: list.offset + 1, length: inner.length, content: `${eol}${indent}${indentUnit(text, root)}${item}${eol}${indent}` }];
    }
    // Only comments inside: the item goes on a line before the closing bracket, or right after the opening one.
    if (multiLine && /^[ \t]*$/.test(text.slice(lineStart(text, close), close))) {
      const indent = indentOf(text, close) + indentUnit(text, rootNode(text)!);
      return [{ offset: lineStart(text, close), length: 0, content: `${indent}${item}${eol}` }];
    }
    return [{ offset: list.offset + 1, length: 0, content: item }];
  }
  const lastEnd = last.offset + last.length;
  const comma = nextSignificant(text, lastEnd);
  const trailing = comma.kind === SyntaxKind.CommaToken;
  const lineEnd = multiLine ? restOfLineIsBlank(text, trailing ? comma.offset + 1 : lastEnd) : undefined;
  if (lineEnd === undefined) return [{ offset: lastEnd, length: 0, content: `, ${item}` }];
  const at = lineEnd - lineBreakLength(text, lineEnd);
  const content = `${eol}${indentOf(text, last.offset)}${item}${trailing ? ',' : ''}`;
  return trailing ? [{ offset: at, length: 0, content }] : [{ offset: lastEnd, length: 0, content: ',' }, { offset: at, length: 0, content }];
}

function rootNode(text: string): Node | undefined {
  const parsed = parseStateText(text);
  return parsed.ok ? parsed.tree : undefined;
}

/** The indentation of the line holding `offset`. */
function indentOf(text: string, offset: number): string {
  const start = lineStart(text, offset);
  return /^[ \t]*/.exec(text.slice(start, offset))![0];
}

/** One level of indentation: that of the root's first property on a line of its own, else two spaces. */
function indentUnit(text: string, root: Node): string {
  const first = root.children?.[0];
  const indent = first ? indentOf(text, first.offset) : '';
  return indent !== '' && /^[ \t]*$/.test(text.slice(lineStart(text, first!.offset), first!.offset)) ? indent : '  ';
}

/** The length of the line break that ends just before `end` (0 at the end of the text without one). */
function lineBreakLength(text: string, end: number): number {
  if (text[end - 1] !== '\n') return 0;
  return text[end - 2] === '\r' ? 2 : 1;
}

/** `[\n  ]` → `[]` when nothing but whitespace is left inside. */
function collapseEmpty(text: string, list: Node): string {
  const inner = text.slice(list.offset + 1, list.offset + list.length - 1);
  if (!/^\s+$/.test(inner)) return text;
  return applyEdits(text, [{ offset: list.offset + 1, length: inner.length, content: '' }]);
}

/** The first token at or after `offset` that is not whitespace, a line break or a comment. */
function nextSignificant(text: string, offset: number): { kind: SyntaxKind; offset: number } {
  const scanner = createScanner(text, false);
  scanner.setPosition(offset);
  for (;;) {
    const kind = scanner.scan();
    if (kind === SyntaxKind.Trivia || kind === SyntaxKind.LineBreakTrivia || kind === SyntaxKind.LineCommentTrivia || kind === SyntaxKind.BlockCommentTrivia) continue;
    return { kind, offset: scanner.getTokenOffset() };
  }
}

/**
 * When the rest of the line from `offset` is blank or a `//` comment, the offset just past its line break (or the
 * end of the text); otherwise undefined.
 */
function restOfLineIsBlank(text: string, offset: number): number | undefined {
  const scanner = createScanner(text, false);
  scanner.setPosition(offset);
  for (;;) {
    const kind = scanner.scan();
    if (kind === SyntaxKind.Trivia || kind === SyntaxKind.LineCommentTrivia) continue;
    if (kind === SyntaxKind.LineBreakTrivia) return scanner.getTokenOffset() + scanner.getTokenLength();
    return kind === SyntaxKind.EOF ? text.length : undefined;
  }
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function sameState(a: ToolState, b: ToolState): boolean {
  return JSON.stringify([a.enabled, a.disabled, a.exceptions ?? []]) === JSON.stringify([b.enabled, b.disabled, b.exceptions ?? []]);
}
