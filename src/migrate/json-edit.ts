import { applyEdits, findNodeAtLocation, format, modify, parseTree, type FormattingOptions } from 'jsonc-parser';

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

/** Removes the member at `path` with its comma; the remaining members keep their lines and indentation. */
export function removeMember(text: string, path: readonly string[]): string {
  const property = findValue(text, path)?.parent;
  if (!property) return text;
  const memberEnd = property.offset + property.length;
  const edits = modify(text, [...path], undefined, {}).map((edit) => {
    // For a first member followed by others, jsonc-parser removes up to the next key, taking that key's line break
    // and indentation with it; keep them.
    const removed = text.slice(edit.offset, edit.offset + edit.length);
    if (edit.content !== '' || text[edit.offset - 1] !== '{' || text[edit.offset + edit.length] !== '"') return edit;
    const lead = /^\s*/.exec(removed)![0].length;
    // A comment between this member and the next belongs to the next one (the config is JSONC): keep it.
    const comment = text.slice(memberEnd, edit.offset + edit.length).search(/\/[/*]/);
    const end = comment >= 0 ? memberEnd + comment : edit.offset + edit.length;
    return { ...edit, offset: edit.offset + lead, length: end - edit.offset - lead };
  });
  return applyEdits(text, edits);
}

/**
 * Appends the member `key: value` to the object at `path`, laid out like the file: in a multi-line (or empty) object
 * on its own lines with `formatting`'s indentation; in a one-line object on the same line. Only the inserted text is
 * formatted, never its neighbours.
 */
export function insertMember(text: string, path: readonly string[], key: string, value: unknown, formatting: FormattingOptions): string {
  const parent = findValue(text, path);
  if (parent?.type !== 'object') return text;
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
