import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The shape of `src/` that README "Source layout" promises, checked on every run: rooms import one way with no
 * circles, and no function is longer than a reader can hold (about 60 lines) unless the list below says why.
 */

const root = fileURLToPath(new URL('../../src/', import.meta.url));
const MAX_FUNCTION_LINES = 60;
const MAX_FILE_LINES = 400;

/** Functions allowed past the limit, each with the reason in one line. Keyed `file:name`. */
const LONG_FUNCTIONS: Record<string, string> = {
  'server/meta-tools.ts:metaToolDefinitions': 'data, not logic: the two meta-tools\' JSON Schemas and descriptions as the model reads them',
};

/** The order of rooms: a file may import its own room and the rooms before it, never one after it. */
const ROOM_ORDER = ['.', 'shared', 'config', 'secrets', 'oauth', 'clients', 'catalog', 'state', 'core', 'audit', 'doctor', 'migrate', 'server', 'cli'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(root);
const parsed = new Map(files.map((file) => [file, ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)]));

/** Relative imports of a file (type-only ones included: they are seams too), resolved to source paths. */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const statement of parsed.get(file)!.statements) {
    const specifier = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) ? statement.moduleSpecifier : undefined;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    out.push(resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts')));
  }
  return out;
}

/** Strongly connected components of more than one file (Tarjan). */
function circles(): string[][] {
  const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => parsed.has(target))]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)!) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(relative(root, member));
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

function roomOf(file: string): string {
  const rel = relative(root, file);
  return rel.includes('/') ? rel.split('/')[0]! : '.';
}

interface LongFunction { key: string; lines: number }

function longFunctions(): LongFunction[] {
  const out: LongFunction[] = [];
  for (const [file, source] of parsed) {
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first > MAX_FUNCTION_LINES) {
          const name = node.name && ts.isIdentifier(node.name) ? node.name.text : `(anonymous at line ${first + 1})`;
          out.push({ key: `${relative(root, file)}:${name}`, lines: last - first });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

describe('source shape (README "Source layout")', () => {
  it('has no import circles', () => {
    assert.deepEqual(circles(), []);
  });

  it(`imports rooms one way: ${ROOM_ORDER.join(' → ')}`, () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = ROOM_ORDER.indexOf(roomOf(file));
      assert.notEqual(from, -1, `${relative(root, file)} is in a room README "Source layout" does not name: add it there and here`);
      for (const target of importsOf(file)) {
        if (!parsed.has(target)) continue;
        const to = ROOM_ORDER.indexOf(roomOf(target));
        if (to > from) wrong.push(`${relative(root, file)} imports ${relative(root, target)}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines without a stated reason`, () => {
    const found = longFunctions();
    const unexplained = found.filter((f) => LONG_FUNCTIONS[f.key] === undefined).map((f) => `${f.key} (${f.lines} lines)`);
    assert.deepEqual(unexplained, [], 'split these, or add them to LONG_FUNCTIONS with the reason in one line');
    const stale = Object.keys(LONG_FUNCTIONS).filter((key) => !found.some((f) => f.key === key));
    assert.deepEqual(stale, [], 'these are no longer long: remove them from LONG_FUNCTIONS');
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file: relative(root, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter((f) => f.lines > MAX_FILE_LINES);
    assert.deepEqual(long.map((f) => `${f.file} (${f.lines} lines)`), []);
  });
});
