/**
 * Small shared pieces of config handling: the name rule for toolboxes and servers (mirrored by
 * workbench-config.schema.json), a plain-object guard and the http(s) URL check.
 */

/** Toolbox and server names: letters, digits, `-` and single `_`; never `__`, never a leading or trailing `_`. */
export const NAME_PATTERN = /^(?!_)(?!.*__)[A-Za-z0-9_-]+(?<!_)$/;

export const NAME_RULE = 'names use letters, digits, "-" and single "_"; they never contain "__" and never start or end with "_"';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `text` is an absolute http(s) URL (a server's `url`, an embeddings endpoint). */
export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
