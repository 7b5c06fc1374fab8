import { isRecord } from '../config/text.js';
import {
  type Redact,
  type Secret,
  argCredentials,
  argSecrets,
  createRedactor,
  envSecrets,
  headerSecrets,
  isSecretHeader,
  isSecretParam,
  isTrivialValue,
  marker,
  namesSecret,
  urlSecrets,
} from '../shared/redact.js';

/**
 * Credentials written literally in server entries, found by the one redaction rule (src/shared/redact.ts, README
 * "Secrets"): what `migrate --from` turns into `${VAR}` (or `${secret:…}`) references instead of copying, what
 * `server add` warns about, and what `migrate` must never print.
 */

/**
 * One credential written literally: an `env` entry, a header, a part of the `url` (user, password, a query parameter)
 * or an argument (`--api-key=…`, or the one after `--api-key`).
 */
export interface LiteralSecret {
  key: 'env' | 'headers' | 'url' | 'args';
  /** The env entry's or header's name; for `url`: `user`, `password` or the query parameter's name; for `args` the flag. */
  name: string;
  value: string;
  /** For `args`: which argument, and where in it the value starts. */
  at?: { index: number; start: number };
  /** What it is, for notes: `env DB_PWD`, `header Authorization`, `url password`, `url query parameter access_token`. */
  what: string;
}

const literal = (value: unknown): value is string => typeof value === 'string' && value !== '' && !value.includes('${') && !isTrivialValue(value);

/** The literal credentials of a server entry, in the order env, headers, url. */
export function literalSecrets(entry: Record<string, unknown>): LiteralSecret[] {
  const found: LiteralSecret[] = [];
  for (const key of ['env', 'headers'] as const) {
    const map = isRecord(entry[key]) ? entry[key] : {};
    const secret = key === 'env' ? namesSecret : isSecretHeader;
    for (const [name, value] of Object.entries(map)) {
      if (secret(name) && literal(value)) found.push({ key, name, value, what: `${key === 'env' ? 'env' : 'header'} ${name}` });
    }
  }
  if (typeof entry.url === 'string') {
    for (const part of urlParts(entry.url)) if (literal(part.value)) found.push({ key: 'url', name: part.name, value: part.value, what: part.what });
  }
  if (Array.isArray(entry.args)) {
    const args = entry.args.map((a) => (typeof a === 'string' ? a : ''));
    for (const { index, start, flag, value } of argCredentials(args)) {
      if (literal(value)) found.push({ key: 'args', name: flag, value, what: `argument --${flag}`, at: { index, start } });
    }
  }
  return found;
}

/**
 * The entry with `secret` replaced by `reference`; a copy. With `keepScheme`, a header keeps its `Bearer `/`Basic `/
 * `Token ` scheme before the reference (which then stands for the credential alone); without, the reference stands
 * for the whole value (a stored secret holds it as written).
 */
export function withReference(entry: Record<string, unknown>, secret: LiteralSecret, reference: string, keepScheme: boolean): Record<string, unknown> {
  if (secret.key === 'url') {
    const url = entry.url as string;
    const part = urlParts(url).find((p) => p.name === secret.name && p.value === secret.value);
    return part ? { ...entry, url: `${url.slice(0, part.start)}${reference}${url.slice(part.end)}` } : entry;
  }
  if (secret.key === 'args') {
    const args = [...(entry.args as unknown[])];
    const arg = secret.at && args[secret.at.index];
    if (typeof arg !== 'string' || arg.slice(secret.at!.start) !== secret.value) return entry;
    args[secret.at!.index] = `${arg.slice(0, secret.at!.start)}${reference}`;
    return { ...entry, args };
  }
  const scheme = keepScheme && secret.key === 'headers' ? (/^(Bearer|Basic|Token)\s+/i.exec(secret.value)?.[0] ?? '') : '';
  return { ...entry, [secret.key]: { ...(entry[secret.key] as Record<string, string>), [secret.name]: `${scheme}${reference}` } };
}

/** The user info and secret-looking query parameters of a URL as written, with where each value sits in the text. */
function urlParts(url: string): { name: string; what: string; value: string; start: number; end: number }[] {
  const parts: { name: string; what: string; value: string; start: number; end: number }[] = [];
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url);
  if (!scheme) return parts;
  const authorityStart = scheme[0].length;
  const authorityEnd = url.slice(authorityStart).search(/[/?#]/);
  const authority = url.slice(authorityStart, authorityEnd < 0 ? url.length : authorityStart + authorityEnd);
  const at = authority.lastIndexOf('@');
  if (at > 0) {
    const colon = outsideReferences(authority.slice(0, at), ':');
    const userEnd = colon < 0 ? at : colon;
    parts.push({ name: 'user', what: 'url user', value: authority.slice(0, userEnd), start: authorityStart, end: authorityStart + userEnd });
    if (colon >= 0) parts.push({ name: 'password', what: 'url password', value: authority.slice(colon + 1, at), start: authorityStart + colon + 1, end: authorityStart + at });
  }
  const queryStart = url.indexOf('?', authorityStart);
  if (queryStart < 0) return parts;
  const hash = url.indexOf('#', queryStart);
  let offset = queryStart + 1;
  for (const pair of url.slice(queryStart + 1, hash < 0 ? url.length : hash).split('&')) {
    const eq = pair.indexOf('=');
    let name = eq < 0 ? pair : pair.slice(0, eq);
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // kept as written
    }
    if (eq > 0 && isSecretParam(name)) {
      parts.push({ name, what: `url query parameter ${name}`, value: pair.slice(eq + 1), start: offset + eq + 1, end: offset + pair.length });
    }
    offset += pair.length + 1;
  }
  return parts;
}

/** The first `char` of `text` that is not inside a `${…}` reference (`${secret:a.b}` holds a colon), else -1. */
function outsideReferences(text: string, char: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.startsWith('${', i)) depth++;
    else if (text[i] === '}' && depth > 0) depth--;
    else if (text[i] === char && depth === 0) return i;
  }
  return -1;
}

/**
 * Everything `migrate` prints about `documents` (the config before and after, the client config read) redacted by the
 * rule: first every JSON member in the text whose name names a secret and whose value is written literally (so short
 * values are hidden too: `"DB_PWD": "[redacted: DB_PWD]"`), then the values the entries hold as known secrets and the
 * credentials of every URL.
 */
export function migrateRedactor(documents: readonly unknown[]): Redact {
  const secrets: Secret[] = [];
  for (const document of documents) collectSecrets(document, secrets);
  // A `${VAR}` or `${secret:…}` reference is not a credential, and is shown (it is what the user must set).
  const byRule = createRedactor(secrets.filter((s) => !/\$(?:\{|%7B)/i.test(s.value)));
  return (text) =>
    byRule(
      text.replace(/("([^"\\]*)"\s*:\s*)"((?:[^"\\]|\\.)*)"/g, (whole, lead: string, name: string, value: string) =>
        isSecretHeader(name) && value !== '' && !value.includes('${') ? `${lead}"${marker(name)}"` : whole,
      ),
    );
}

/** The secrets of every server-like object in a JSON value (any client's shape): env, headers, args, url. */
function collectSecrets(node: unknown, into: Secret[]): void {
  if (Array.isArray(node)) {
    for (const item of node) collectSecrets(item, into);
    return;
  }
  if (!isRecord(node)) return;
  const strings = (value: unknown): Record<string, string> =>
    isRecord(value) ? Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};
  into.push(...envSecrets(strings(node.env)));
  for (const [name, value] of Object.entries(strings(node.headers))) into.push(...headerSecrets(name, value));
  if (Array.isArray(node.args)) into.push(...argSecrets(node.args.filter((a): a is string => typeof a === 'string')));
  for (const key of ['url', 'serverUrl']) if (typeof node[key] === 'string') into.push(...urlSecrets(node[key]));
  for (const value of Object.values(node)) collectSecrets(value, into);
}
