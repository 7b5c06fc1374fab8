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
  return { validate: new Ajv({ allErrors: true }).compile(document), keys };
}
