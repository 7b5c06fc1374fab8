import { Ajv, type ValidateFunction } from 'ajv';
import { readFileSync } from 'node:fs';

/**
 * A JSON Schema that ships with the package (the config's, the project file's), compiled with the one Ajv set-up
 * for files a user writes (every error at once), and the keys each of its object levels allows — read from the
 * schema itself, so a suggestion for an unknown key never drifts from what the schema accepts.
 */
export interface BundledSchema<Definition extends string> {
  validate: ValidateFunction;
  /** `top`: the document's own properties; else a definition's. */
  keys: Record<'top' | Definition, readonly string[]>;
}

/**
 * Reads and compiles `file` from the package root (two levels above src/config and dist/config alike).
 *
 * @param definitions the definitions whose allowed keys are wanted, by the name `keys` gives them → the definition.
 */
export function loadBundledSchema<Level extends string>(file: string, definitions: Record<Level, string>): BundledSchema<Level> {
  const document = JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as {
    properties: Record<string, unknown>;
    definitions: Record<string, { properties: Record<string, unknown> }>;
  };
  const keys = { top: Object.keys(document.properties) } as Record<'top' | Level, readonly string[]>;
  for (const [level, definition] of Object.entries(definitions) as [Level, string][]) {
    keys[level] = Object.keys(document.definitions[definition]?.properties ?? {});
  }
  return { validate: new Ajv({ allErrors: true }).compile(withoutEditorOnly(file, document)), keys };
}

/**
 * Constraints of a shipped schema that are for editors only, as JSON pointers per file: an editor shows them as the
 * user types, while the loader checks the same rule itself where breaking it must fail only one server (a `url` that
 * is not http(s): README "One bad part fails only itself"), so they are removed before compiling.
 */
const EDITOR_ONLY: Record<string, readonly string[]> = {
  'workbench-config.schema.json': ['/definitions/server/properties/url/pattern'],
};

function withoutEditorOnly(file: string, document: object): object {
  const copy = structuredClone(document) as Record<string, unknown>;
  for (const pointer of EDITOR_ONLY[file] ?? []) {
    const keys = pointer.split('/').slice(1);
    const parent = keys.slice(0, -1).reduce<Record<string, unknown> | undefined>((node, key) => node?.[key] as Record<string, unknown> | undefined, copy);
    if (parent === undefined || !(keys.at(-1)! in parent)) throw new Error(`${file}: ${pointer} is not in the schema (EDITOR_ONLY is stale)`);
    delete parent[keys.at(-1)!];
  }
  return copy;
}
