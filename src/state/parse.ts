import { type Node, type ParseError, parseTree } from 'jsonc-parser';
import type { ToolState } from '../catalog/visibility.js';
import { lineAndColumn, syntaxError } from '../config/parse-json.js';
import type { FilePosition } from './file-errors.js';

/**
 * The state file's text as JSONC (README "Enabled and disabled tools"): comments and trailing commas are fine, a key
 * written twice is not (JSON would silently keep the last one, which could re-enable what the first one disabled).
 * Every problem comes with its line and column.
 */

export type ParsedState =
  | {
      ok: true;
      /** The lists, trimmed, without blanks or duplicates. */
      state: ToolState;
      /** Top-level keys other than `enabled`, `disabled` and `exceptions` (ignored here, kept by every write). */
      extraKeys: string[];
      /** The syntax tree, for edits that keep the user's layout and comments. */
      tree: Node;
    }
  | { ok: false; position: FilePosition; reason: string };

export const STATE_LISTS = ['enabled', 'disabled', 'exceptions'] as const;

/** Trimmed, blanks dropped, first occurrence kept. */
export function normalizeNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const raw of names) {
    const name = raw.trim();
    if (name !== '') seen.add(name);
  }
  return [...seen];
}

/** Parses state-file text (without a byte-order mark). Never throws. */
export function parseStateText(text: string): ParsedState {
  const fail = (offset: number, reason: string): ParsedState => {
    const { line, column } = lineAndColumn(text, offset);
    return { ok: false, position: { line, column }, reason };
  };
  if (text.trim() === '') return fail(0, `the file is empty (write ${'{"enabled": [], "disabled": []}'}, or delete it)`);
  const errors: ParseError[] = [];
  let tree: Node | undefined;
  try {
    tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  } catch {
    // The recursive parser ran out of stack on absurd nesting.
    return fail(0, 'nested too deeply');
  }
  const first = errors[0];
  if (first) {
    const error = syntaxError(text);
    return fail(error.offset, `${error.reason}${error.hint}`);
  }
  if (!tree) return fail(0, 'no value');
  if (tree.type !== 'object') return fail(tree.offset, 'expected an object like {"enabled": [], "disabled": []}');

  const duplicate = findDuplicateKey(tree);
  if (duplicate) {
    return fail(duplicate.offset, `key "${String(duplicate.value)}" is written twice in the same object (JSON keeps only the last one): remove or merge one`);
  }
  const lists: Record<(typeof STATE_LISTS)[number], string[]> = { enabled: [], disabled: [], exceptions: [] };
  const extraKeys: string[] = [];
  for (const property of tree.children ?? []) {
    const [key, value] = property.children ?? [];
    const name = String(key?.value);
    if (name === 'version' && value?.value !== 1) {
      // A later format may disable tools in ways this version cannot read: refused (fail closed), never half-read.
      return fail(value?.offset ?? property.offset, `the file says "version": ${JSON.stringify(value?.value ?? null)}, a format this workbench does not know (a newer workbench wrote it?); use that workbench, or remove "version" and keep only "enabled", "disabled" and "exceptions"`);
    }
    if (name !== 'enabled' && name !== 'disabled' && name !== 'exceptions') {
      if (name !== 'version') extraKeys.push(name);
      continue;
    }
    if (!value || value.type !== 'array') return fail(value?.offset ?? property.offset, `"${name}" must be an array of strings, found ${kindOf(value)}`);
    for (const item of value.children ?? []) {
      if (item.type !== 'string') return fail(item.offset, `"${name}" must hold strings only, found ${kindOf(item)}`);
      lists[name].push(item.value as string);
    }
  }
  const exceptions = normalizeNames(lists.exceptions);
  const state = { enabled: normalizeNames(lists.enabled), disabled: normalizeNames(lists.disabled), ...(exceptions.length > 0 && { exceptions }) };
  return { ok: true, state, extraKeys, tree };
}

/** The property node of a top-level list, if the file has one. */
export function listNode(tree: Node, key: (typeof STATE_LISTS)[number]): Node | undefined {
  const property = tree.children?.find((p) => p.children?.[0]?.value === key);
  return property?.children?.[1];
}

/** The first key written a second time in any object, as its key node. */
function findDuplicateKey(node: Node): Node | undefined {
  if (node.type === 'object') {
    const seen = new Set<string>();
    for (const property of node.children ?? []) {
      const key = property.children?.[0];
      if (key && seen.has(String(key.value))) return key;
      if (key) seen.add(String(key.value));
    }
  }
  for (const child of node.children ?? []) {
    const found = findDuplicateKey(child);
    if (found) return found;
  }
  return undefined;
}

function kindOf(node: Node | undefined): string {
  if (!node) return 'nothing';
  if (node.type === 'null') return 'null';
  return node.type === 'array' || node.type === 'object' ? `an ${node.type}` : `a ${node.type}`;
}
