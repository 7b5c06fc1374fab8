/**
 * A valid toolbox or server name close to `name`: accents dropped, every run of other characters replaced by `-`,
 * runs of `_` collapsed, `-`/`_` trimmed from both ends; `fallback` when nothing is left.
 */
export function sanitizeName(name: string, fallback = 'server'): string {
  const cleaned = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/_{2,}/g, '_')
    .replace(/^[-_]+|[-_]+$/g, '');
  return cleaned === '' ? fallback : cleaned;
}

/** `name`, or `name-2`, `name-3`, … — the first that is not in `taken`. */
export function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) if (!taken.has(`${name}-${n}`)) return `${name}-${n}`;
}
