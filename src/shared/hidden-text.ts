/**
 * Characters a person never sees but a model reads: Unicode format characters (category Cf) — zero-width spaces and
 * joiners, the byte-order mark, soft hyphens, bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E/F) and
 * the tag characters U+E0000–U+E007F that can spell out a whole hidden instruction. Text a downstream server wrote
 * for the model is shown with each of them replaced by a visible escape (`\u200b`, `\u{e0041}`), so nothing can hide
 * in a description (README "Hidden characters"). What is sent to the server is never changed.
 */
const HIDDEN = /\p{Cf}/gu;
const ANY_HIDDEN = /\p{Cf}/u;

/** The keys of a JSON Schema whose string values are prose for the model. */
const PROSE_KEYS = new Set(['description', 'title']);

/** `text` with every hidden character shown as an escape; the same string when it has none. */
export function revealHidden(text: string): string {
  if (!ANY_HIDDEN.test(text)) return text;
  return text.replace(HIDDEN, (ch) => {
    const code = ch.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** How many hidden characters `text` holds. */
export function countHidden(text: string): number {
  if (!ANY_HIDDEN.test(text)) return 0;
  return text.match(HIDDEN)?.length ?? 0;
}

/**
 * A JSON Schema with the hidden characters of its `description` and `title` strings revealed, at any depth. Returns
 * the same object when there is nothing to reveal (the common case costs no copy); property names, enum values and
 * everything else are kept exactly, as they are what a call must send.
 */
export function revealInSchema<T>(schema: T): T {
  return reveal(schema, false) as T;
}

function reveal(value: unknown, prose: boolean): unknown {
  if (typeof value === 'string') return prose ? revealHidden(value) : value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = reveal(item, false);
      if (next !== item) (copy ??= [...value])[i] = next;
    });
    return copy ?? value;
  }
  if (typeof value !== 'object' || value === null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    // Only a string under "description"/"title" is prose: under "properties" a parameter named "title" maps to its
    // schema (an object), which is walked as a schema.
    const next = reveal(item, PROSE_KEYS.has(key));
    if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
  }
  return copy ?? value;
}

/** The hidden characters in what a tool shows the model: title, description, and the schemas' prose. */
export function countHiddenInTool(tool: { title?: unknown; description?: unknown; inputSchema?: unknown; outputSchema?: unknown; annotations?: unknown }): number {
  let count = 0;
  const walk = (value: unknown, prose: boolean): void => {
    if (typeof value === 'string') {
      if (prose) count += countHidden(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, false);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) walk(item, PROSE_KEYS.has(key));
    }
  };
  walk(tool.title, true);
  walk(tool.description, true);
  walk(tool.inputSchema, false);
  walk(tool.outputSchema, false);
  walk(tool.annotations, false);
  return count;
}
