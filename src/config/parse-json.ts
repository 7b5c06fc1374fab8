import { isUtf8 } from 'node:buffer';
import { type Node, type ParseError, ParseErrorCode, parseTree, visit } from 'jsonc-parser';
import { WorkbenchError, type WorkbenchErrorCode } from '../errors.js';
import { formatJsonPath, type JsonPath } from './expand-env.js';

/**
 * JSONC for the files a user writes (the config and the project file; the state file has its own reader in state/):
 * JSON with line and block comments and trailing commas, as every MCP client's config that users copy from is. Read
 * with jsonc-parser, which also gives what `JSON.parse` cannot — the position of a syntax error, and keys written twice
 * in one object. Values are built as `JSON.parse` builds them (a `__proto__` key stays data; the last of a key written
 * twice wins, and is reported).
 */
export interface JsonDocument {
  value: unknown;
  /** Every key that appears more than once in its object, as the path of the key (reported once per object). */
  duplicateKeys: JsonPath[];
}

/** Where and why a text is not JSON. */
export class JsonSyntaxError extends Error {
  constructor(
    readonly reason: string,
    /** 0-based offset into the text (after a byte-order mark is removed). */
    readonly offset: number,
    readonly line: number,
    readonly column: number,
    readonly lineText: string,
    /** A hint such as " (JSON strings use double quotes)", or ''. */
    readonly hint: string,
  ) {
    super(`${reason} at line ${line}, column ${column}${hint}`);
    this.name = 'JsonSyntaxError';
  }
}

/**
 * Parses JSON text (a leading byte-order mark is ignored) and finds duplicate keys.
 *
 * @throws JsonSyntaxError with the reason, 1-based line and column, the offending line and a hint.
 */
export function parseJsonText(text: string): JsonDocument {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const errors: ParseError[] = [];
  let tree: Node | undefined;
  try {
    tree = parseTree(body, errors, JSONC);
  } catch {
    // The recursive parser ran out of stack on absurd nesting.
    throw new JsonSyntaxError('Nested too deeply', 0, 1, 1, '', '');
  }
  if (errors.length > 0 || tree === undefined) throw syntaxError(body);
  return { value: valueOf(tree), duplicateKeys: findDuplicateKeys(body) };
}

/** Comments and trailing commas allowed; an empty text is not a document. */
const JSONC = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false } as const;

/**
 * A node's value as `JSON.parse` would give it: keys defined as data (never a prototype), the last of a twice-written
 * key. Built with a stack of its own rather than recursion, so nesting as deep as the parser accepts is fine.
 */
function valueOf(root: Node): unknown {
  const empty = (node: Node): unknown => (node.type === 'array' ? [] : node.type === 'object' ? {} : node.value);
  const isContainer = (node: Node): boolean => node.type === 'array' || node.type === 'object';
  const top = empty(root);
  const pending: { node: Node; value: unknown }[] = [{ node: root, value: top }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, value } = next;
    if (node.type === 'array') {
      for (const child of node.children ?? []) {
        const item = empty(child);
        (value as unknown[]).push(item);
        if (isContainer(child)) pending.push({ node: child, value: item });
      }
    } else if (node.type === 'object') {
      for (const property of node.children ?? []) {
        const [key, child] = property.children ?? [];
        if (key === undefined) continue;
        const item = child === undefined ? null : empty(child);
        Object.defineProperty(value, String(key.value), { value: item, enumerable: true, writable: true, configurable: true });
        if (child !== undefined && isContainer(child)) pending.push({ node: child, value: item });
      }
    }
  }
  return top;
}

/**
 * {@link parseJsonText} for a file the workbench loads: a syntax error becomes a WorkbenchError (`code`, default
 * `CONFIG_PARSE`) naming `what` and `source`, the line and column, and no byte of the file (what a client is shown
 * never quotes a file: it may hold a secret, and a project file may be a link to any file); an excerpt of the line
 * with a caret is its `local` text, for the terminal only.
 */
export function parseJsonDocument(
  text: string,
  source: string,
  code: WorkbenchErrorCode = 'CONFIG_PARSE',
  /** What an empty file is told it needs. */
  least = 'A config needs at least { "toolboxes": {} } (workbench-config.example.json shows the format).',
  /** What the file is, for the message: "the config", "the project file". */
  what = 'the config',
): JsonDocument {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.trim() === '') throw new WorkbenchError(code, `Cannot parse ${what} ${source}: the file is empty. ${least}`);
  // UTF-16 (an editor's "Unicode" encoding) read as UTF-8 starts with two replacement characters and is full of NULs.
  if (body.startsWith('\uFFFD\uFFFD') || body.includes('\u0000')) throw notUtf16OrBinary(code, what, source);
  try {
    return parseJsonText(body);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new WorkbenchError(
      code,
      `${capitalise(what)} ${source} is not valid JSON at line ${error.line}, column ${error.column}: ${error.reason}${error.hint}; fix it there.`,
      { cause: error, local: excerpt(error.line, error.column, error.lineText) },
    );
  }
}

function notUtf16OrBinary(code: WorkbenchErrorCode, what: string, source: string): WorkbenchError {
  return new WorkbenchError(code, `Cannot parse ${what} ${source}: it is not UTF-8 text (it looks like UTF-16 or a binary file). Save it as UTF-8 (JSON files are UTF-8).`);
}

/**
 * The text of a JSON file the user writes, from its bytes (read them with `readFile(path)`, not as 'utf8', which would
 * turn every byte that is not UTF-8 into U+FFFD silently — and an edit would then write those back).
 *
 * @throws WorkbenchError `code` (default `CONFIG_PARSE`) when it is UTF-16 or binary (NUL bytes), or has bytes that are
 *   not UTF-8 (a file saved as Latin-1 or Windows-1252): the message names the first such byte's value and line, never
 *   the bytes themselves.
 */
export function jsonFileText(bytes: Uint8Array, source: string, code: WorkbenchErrorCode = 'CONFIG_PARSE', what = 'the config'): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (bytes.includes(0) || text.startsWith('\uFFFD\uFFFD')) throw notUtf16OrBinary(code, what, source);
  const bad = nonUtf8Byte(bytes);
  if (bad === undefined) return text;
  throw new WorkbenchError(
    code,
    `${capitalise(what)} ${source} is not UTF-8 (byte ${bad.byte} at line ${bad.line}; it may have been saved as Latin-1 or Windows-1252); save it as UTF-8 (JSON files are UTF-8).`,
  );
}

/** The first byte that is not UTF-8, as a message names it: its value ("0xE9"), 1-based line and (byte) column. */
export function nonUtf8Byte(bytes: Uint8Array): { byte: string; line: number; column: number } | undefined {
  const at = firstNonUtf8(bytes);
  if (at === undefined) return undefined;
  const lineStart = bytes.subarray(0, at).lastIndexOf(0x0a) + 1;
  const line = bytes.subarray(0, at).filter((b) => b === 0x0a).length + 1;
  return { byte: `0x${bytes[at]!.toString(16).toUpperCase().padStart(2, '0')}`, line, column: at - lineStart + 1 };
}

/** The offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629), if there is one. */
function firstNonUtf8(bytes: Uint8Array): number | undefined {
  if (isUtf8(bytes)) return undefined;
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    // The second byte's range excludes overlong forms, surrogates and code points above U+10FFFF.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    if (length === 0 || i + length > bytes.length) return i;
    if (bytes[i + 1]! < low || bytes[i + 1]! > high) return i;
    for (let k = 2; k < length; k++) if (bytes[i + k]! < 0x80 || bytes[i + k]! > 0xbf) return i;
    i += length;
  }
  return undefined;
}

function capitalise(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/** The problem text for a duplicate key, as every file reports it: `<path>: key written twice …`. */
export function duplicateKeyMessage(): string {
  return 'this key is written more than once in the same object; JSON keeps only the last one, so remove or merge the others';
}

/** `toolboxes.dev` and the like, for a list of duplicate key paths. */
export function describeDuplicateKeys(paths: readonly JsonPath[]): string[] {
  return paths.map((path) => `${formatJsonPath(path)}: ${duplicateKeyMessage()}`);
}

function findDuplicateKeys(text: string): JsonPath[] {
  const found: JsonPath[] = [];
  const objects: { keys: Set<string>; reported: Set<string> }[] = [];
  try {
    visit(
      text,
      {
        onObjectBegin: () => void objects.push({ keys: new Set(), reported: new Set() }),
        onObjectEnd: () => void objects.pop(),
        onObjectProperty: (property, _offset, _length, _line, _column, pathSupplier) => {
          const object = objects[objects.length - 1];
          if (!object) return;
          if (!object.keys.has(property)) {
            object.keys.add(property);
            return;
          }
          if (object.reported.has(property)) return;
          object.reported.add(property);
          found.push([...pathSupplier(), property]);
        },
      },
      JSONC,
    );
  } catch {
    // Absurd nesting can exhaust the stack of the recursive parser: it parsed, so report nothing.
  }
  return found;
}

/** The first syntax error of JSONC `text`, described as JSON.parse would (the config and the tool state file alike). */
export function syntaxError(text: string): JsonSyntaxError {
  let first: { code: ParseErrorCode; offset: number } | undefined;
  /** Whether the innermost open container at the error is an object or an array. */
  const open: ('{' | '[')[] = [];
  let inside: '{' | '[' | undefined;
  try {
    visit(
      text,
      {
        onObjectBegin: () => void open.push('{'),
        onObjectEnd: () => void open.pop(),
        onArrayBegin: () => void open.push('['),
        onArrayEnd: () => void open.pop(),
        onError: (code, offset) => {
          if (first) return;
          first = { code, offset };
          inside = open[open.length - 1];
        },
      },
      JSONC,
    );
  } catch {
    // see findDuplicateKeys
  }
  // Should the visit find nothing wrong, the end of the text is the best position.
  const offset = first ? pinpoint(text, first.code, first.offset) : text.length;
  const reason = first ? describeCode(first.code, text, offset, inside) : 'Not valid JSON';
  const { line, column, lineText } = lineAndColumn(text, offset);
  return new JsonSyntaxError(reason, offset, line, column, lineText, syntaxHint(text, offset));
}

/** jsonc-parser reports string errors at the string's start; point at the offending character inside it. */
function pinpoint(text: string, code: ParseErrorCode, offset: number): number {
  const at = Math.min(offset, text.length);
  if (code !== ParseErrorCode.InvalidCharacter && code !== ParseErrorCode.InvalidEscapeCharacter && code !== ParseErrorCode.InvalidUnicode) return at;
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (code === ParseErrorCode.InvalidCharacter ? c < 0x20 : text[i] === '\\' && (code === ParseErrorCode.InvalidUnicode ? text[i + 1] === 'u' : !'"\\/bfnrtu'.includes(text[i + 1] ?? ''))) return i;
    if (text[i] === '\\') i++;
    else if (text[i] === '"') break;
  }
  return at;
}

/** Why, in words that never quote the text (the character at fault is shown only in the terminal's excerpt). */
function describeCode(code: ParseErrorCode, text: string, offset: number, inside: '{' | '[' | undefined): string {
  switch (code) {
    case ParseErrorCode.CommaExpected:
      return inside === '[' ? "Expected ',' or ']' after array element" : "Expected ',' or '}' after property value";
    case ParseErrorCode.CloseBraceExpected:
      return "Expected ',' or '}' after property value";
    case ParseErrorCode.CloseBracketExpected:
      return "Expected ',' or ']' after array element";
    case ParseErrorCode.ColonExpected:
      return "Expected ':' after property name";
    case ParseErrorCode.PropertyNameExpected:
      return 'Expected a property name in double quotes';
    case ParseErrorCode.ValueExpected:
      return offset >= text.length ? 'Unexpected end of input' : 'Unexpected character';
    case ParseErrorCode.EndOfFileExpected:
      return 'Unexpected text after the end of the JSON value';
    case ParseErrorCode.InvalidCommentToken:
    case ParseErrorCode.UnexpectedEndOfComment:
      return 'A /* comment is never closed';
    case ParseErrorCode.UnexpectedEndOfString:
      return 'Unterminated string';
    case ParseErrorCode.UnexpectedEndOfNumber:
    case ParseErrorCode.InvalidNumberFormat:
      return 'Invalid number';
    case ParseErrorCode.InvalidUnicode:
      return 'Invalid \\u escape in string';
    case ParseErrorCode.InvalidEscapeCharacter:
      return 'Invalid escape in string';
    case ParseErrorCode.InvalidCharacter:
      return 'Bad control character in string literal';
    case ParseErrorCode.InvalidSymbol:
    default:
      return offset >= text.length ? 'Unexpected end of input' : 'Unexpected character';
  }
}

/** The 1-based line and column of a character offset in `text`, and the text of that line. */
export function lineAndColumn(text: string, position: number): { line: number; column: number; lineText: string } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < position; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const lineEnd = text.indexOf('\n', lineStart);
  const lineText = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd).replace(/\r$/, '');
  return { line, column: position - lineStart + 1, lineText };
}

/** The offending line with a caret under the column; long lines are cut to a window around it. */
function excerpt(line: number, column: number, lineText: string): string {
  const width = 100;
  let shown = lineText.replace(/\t/g, ' ');
  let caretAt = column - 1;
  if (shown.length > width) {
    const start = Math.max(0, Math.min(caretAt - width / 2, shown.length - width));
    shown = `${start > 0 ? '…' : ''}${shown.slice(start, start + width)}${start + width < shown.length ? '…' : ''}`;
    caretAt = caretAt - start + (start > 0 ? 1 : 0);
  }
  const gutter = String(line);
  return `  ${gutter} | ${shown}\n  ${' '.repeat(gutter.length)} | ${' '.repeat(Math.max(0, caretAt))}^`;
}

function syntaxHint(text: string, position: number): string {
  const ch = text[position];
  if (position >= text.length) return ' (the file ends early: a closing "}", "]" or quote may be missing)';
  if (ch === "'") return ' (JSON strings use double quotes)';
  if (ch !== undefined && ch < ' ' && ch !== '\n' && ch !== '\r') return ' (write it escaped, e.g. \\t or \\n)';
  return '';
}
