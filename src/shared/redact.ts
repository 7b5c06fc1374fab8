/**
 * The one redaction rule for everything the workbench prints or returns (tool results, logs, `doctor`, `tools list`,
 * `validate`, JSON output). A value is hidden by what it means, whether it was written literally in the config or
 * came from `${VAR}`: the value of an `env` entry, a header or a `--flag=value` argument whose name names a secret
 * (see {@link namesSecret}); the `Authorization`, `Cookie` and `Proxy-Authorization` headers; the user info of any URL
 * and the values of its secret-looking query parameters; and a `${VAR}` value whose variable name names a secret,
 * wherever it is used. Everything else is shown as expanded, so a user can see what a server was started with. Each
 * hidden value is replaced by a marker saying what was hidden, e.g. `[redacted: env API_TOKEN]`,
 * `[redacted: header Authorization]` or `[redacted: ${GITHUB_TOKEN}]`, so a message stays readable and says where to
 * look.
 */

/** A value that must never be shown, and what the marker calls it. */
export interface Secret {
  value: string;
  /** Shown in the marker: `password`, `header Authorization`, `${VAR}`, … */
  label: string;
}

/**
 * Values shorter than this are not searched for in free text (a 2-character value would redact unrelated text all
 * over a message); they are still hidden where they sit structurally (URL user info, secret query parameters).
 */
export const MIN_SECRET_LENGTH = 4;

/**
 * Words that make a name (of an env entry, a header, a flag, a variable) name a secret, matched as whole parts of it:
 * `API_TOKEN`, `x-api-key`, `dbPassword` and `SESSION_ID` do; `MONKEY`, `KEYBOARD_LAYOUT` and `AUTHOR` do not.
 */
const SECRET_WORDS = new Set(['token', 'key', 'secret', 'password', 'passwd', 'pwd', 'passphrase', 'auth', 'authorization', 'credential', 'cookie', 'session', 'private']);
/** Parts that join a word with its qualifier (`APIKEY`, `accessToken` written as one word, `clientsecret`). */
const JOINED_SECRET = /^(?:[a-z]*(?:token|secret|password|passwd|credential)|(?:api|access|private|secret|signing|master|encryption|license|session|auth)key|(?:auth|session)id)s?$/;
/** Headers whose value is a credential whatever the rule above says of their names. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** Query parameter names that look like they carry a credential (matched anywhere in the lower-cased name). */
const SECRET_PARAM_PARTS = ['token', 'key', 'secret', 'passw', 'pwd', 'sig', 'auth', 'credential', 'session', 'cookie', 'code', 'jwt', 'bearer'];

export function marker(label: string): string {
  return `[redacted: ${label}]`;
}

/**
 * Whether a name names a secret: one of its parts (split at anything but letters and digits, and at camelCase humps)
 * is a secret word (token, key, secret, password, passwd, pwd, passphrase, auth, authorization, credential, cookie,
 * session, private), its plural, or such a word joined to its qualifier (`apikey`, `accesstoken`).
 */
export function namesSecret(name: string): boolean {
  const parts = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return parts.some((part) => part !== '' && (SECRET_WORDS.has(part) || SECRET_WORDS.has(part.replace(/s$/, '')) || JOINED_SECRET.test(part)));
}

/** Whether the value of a header of this name is a credential (`Authorization`, `Cookie`, `X-Api-Key`, …). */
export function isSecretHeader(name: string): boolean {
  return SECRET_HEADERS.has(name.toLowerCase()) || namesSecret(name);
}

/** Whether a query parameter of this name is treated as a secret. */
export function isSecretParam(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_PARAM_PARTS.some((part) => lower.includes(part));
}

/** What in a URL is a credential: its user info and the names of secret-looking query parameters. Never values. */
export function urlCredentials(url: string): { userInfo: boolean; params: string[] } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { userInfo: false, params: [] };
  }
  const params = [...new Set([...parsed.searchParams.keys()].filter(isSecretParam))];
  return { userInfo: parsed.username !== '' || parsed.password !== '', params };
}

/**
 * The secrets a URL holds, decoded and as written (percent-encoded), each labelled: user name and password of the
 * user info, and the values of secret-looking query parameters.
 */
export function urlSecrets(url: string): Secret[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const found: Secret[] = [];
  const add = (raw: string, label: string): void => {
    if (raw === '') return;
    found.push({ value: raw, label });
    try {
      const decoded = decodeURIComponent(raw);
      if (decoded !== raw) found.push({ value: decoded, label });
    } catch {
      // not valid percent-encoding: the raw form is enough
    }
  };
  // A user name that is a plain word (`deploy`, `admin`, `x-access-token`) names who signs in: it is hidden inside URLs
  // (see redactUrl) but not wherever the word appears, which would mangle server names, hosts and commands in a
  // report. A token in that place (`https://ghp_…@host`) is hidden everywhere.
  if (!PLAIN_USER_NAME.test(safeDecode(parsed.username))) add(parsed.username, 'user name');
  add(parsed.password, 'password');
  for (const [name, value] of parsed.searchParams) {
    if (!isSecretParam(name) || value === '') continue;
    found.push({ value, label: name });
    const encoded = encodeURIComponent(value);
    if (encoded !== value) found.push({ value: encoded, label: name });
  }
  return found;
}

/**
 * The value of a secret header (see {@link isSecretHeader}), and its credential alone when it has a scheme
 * (`Bearer abc…` → `abc…`); nothing for any other header.
 */
export function headerSecrets(name: string, value: string): Secret[] {
  if (!isSecretHeader(name)) return [];
  const label = `header ${name}`;
  const found: Secret[] = [{ value, label }];
  const credential = /^[A-Za-z][A-Za-z0-9-]*\s+(\S.*)$/.exec(value)?.[1];
  if (credential) found.push({ value: credential, label });
  return found;
}

/** The values of `env` entries whose names name a secret, labelled `env NAME`. */
export function envSecrets(env: Readonly<Record<string, string>>): Secret[] {
  return Object.entries(env).flatMap(([name, value]) => (namesSecret(name) && value !== '' ? [{ value, label: `env ${name}` }] : []));
}

/** One credential in a server's arguments: `args[index]` from character `start` on is the value. */
export interface ArgCredential {
  index: number;
  start: number;
  flag: string;
  value: string;
}

/** A flag that names a secret but whose value is where to find it (`--token-file`, `--key-path`), not the secret. */
const NAMES_A_PLACE = /(?:^|[^a-z])(?:file|path|dir|directory|env|var|name|id)s?$/i;

/**
 * The credentials written into arguments: the value of `--name=value` (or `-name=value`) whose flag names a secret
 * (`--api-key=…`), and the argument after a lone such flag (`--api-key`, `sk-…`) when it looks like a credential —
 * at least 8 characters, no spaces, not a flag or a path — and the flag does not name a place (`--token-file`).
 */
export function argCredentials(args: readonly string[]): ArgCredential[] {
  const found: ArgCredential[] = [];
  args.forEach((arg, index) => {
    const joined = /^(--?)([A-Za-z][A-Za-z0-9_.-]*)=(.+)$/s.exec(arg);
    if (joined && namesSecret(joined[2]!)) {
      found.push({ index, start: joined[1]!.length + joined[2]!.length + 1, flag: joined[2]!, value: joined[3]! });
      return;
    }
    const lone = /^--?([A-Za-z][A-Za-z0-9_.-]*)$/.exec(arg);
    const next = args[index + 1];
    if (lone && next !== undefined && namesSecret(lone[1]!) && !NAMES_A_PLACE.test(lone[1]!) && /^[^\s\-/.~][^\s]{7,}$/.test(next)) {
      found.push({ index: index + 1, start: 0, flag: lone[1]!, value: next });
    }
  });
  return found;
}

/** The values of `argCredentials`, labelled by their flag: `--api-key`. */
export function argSecrets(args: readonly string[]): Secret[] {
  return argCredentials(args).map(({ flag, value }) => ({ value, label: `--${flag}` }));
}

/**
 * Values not searched for in free text even under a secret name: flags and small numbers (`SESSION_PERSIST: "true"`)
 * would hide every `true` in a message and protect nothing.
 */
const TRIVIAL_VALUE = /^(?:true|false|yes|no|on|off|null|none|\d{1,6})$/i;

/** Whether a value is a flag or a small number (see above): never taken for a credential written into a file. */
export function isTrivialValue(value: string): boolean {
  return TRIVIAL_VALUE.test(value);
}

// Any scheme://… up to whitespace, a quote or a bracket (a `${VAR}` reference in it included); linear, and only run
// on error and log text.
const URL_IN_TEXT = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^\s"'<>()[\]{}$]|\$\{[^{}\s]*\}|\$)+/g;
/**
 * `Bearer …`, `Basic …`, `Token …` and the credential after it. A plain word is not a credential: letters only, at
 * most the first one a capital, shorter than 16 characters ("401 with a Bearer challenge", "Basic authentication");
 * a credential has digits, other characters, mixed case or length.
 */
const AUTH_SCHEME_IN_TEXT = /\b(Bearer|Basic|Token)\s+(?![A-Za-z][a-z]{7,14}(?![A-Za-z0-9._~+/=-]))[A-Za-z0-9._~+/=-]{8,}/g;
/** A marker already in the text: never redacted again, so applying the redactor twice changes nothing. */
const MARKER_IN_TEXT = /\[redacted: [^\]]*\]/g;
/** Text that is only `${VAR}` / `${secret:NAME}` references: a reference is not a credential, and is shown whole. */
const REFERENCES_ONLY = /^(?:\$\{[^{}\s]*\})+$/;
/** User info made of such references only (`${U}:${secret:p}`), or nothing. */
const USER_INFO_REFERENCES = /^(?:\$\{[^{}\s]*\})*(?::(?:\$\{[^{}\s]*\})*)?$/;
/** A user name that is a word, not a token: letters and `.`, `_`, `-`, at most 16 characters. */
const PLAIN_USER_NAME = /^[A-Za-z][A-Za-z._-]{0,15}$/;

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * OAuth credentials as an authorization server's answer or a token request carries them, in JSON (`"access_token":
 * "…"`) or form encoding (`refresh_token=…`): an error that quotes a body never shows one. A `${VAR}` reference
 * in their place is not a credential and stays.
 */
const OAUTH_FIELD_IN_TEXT = /\b(access_token|refresh_token|id_token|client_secret|code_verifier|client_assertion|assertion|subject_token)("?\s*[:=]\s*"?)(?!\$\{)([^\s"&,}]{4,})/g;

/**
 * Hides the user info and secret query parameter values of one URL, keeping everything else as written:
 * `https://u:p@host/mcp?token=t&x=1` → `https://[redacted: user info]@host/mcp?token=[redacted: token]&x=1`.
 * Text that is not a URL is returned unchanged.
 */
export function redactUrl(url: string): string {
  const schemeEnd = url.indexOf('://');
  if (schemeEnd < 0) return url;
  const authorityStart = schemeEnd + 3;
  let rest = url.slice(authorityStart);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const at = authority.lastIndexOf('@');
  let out = url.slice(0, authorityStart);
  if (at >= 0 && !USER_INFO_REFERENCES.test(authority.slice(0, at))) {
    out += `${marker('user info')}@${authority.slice(at + 1)}`;
  } else {
    out += authority;
  }
  rest = authorityEnd < 0 ? '' : rest.slice(authorityEnd);
  const queryStart = rest.indexOf('?');
  if (queryStart < 0) return out + rest;
  const hashStart = rest.indexOf('#', queryStart);
  const query = rest.slice(queryStart + 1, hashStart < 0 ? undefined : hashStart);
  const pairs = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name = rawName;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      // keep as written
    }
    const value = pair.slice(eq + 1);
    return eq >= 0 && isSecretParam(name) && value !== '' && !REFERENCES_ONLY.test(value) && !value.startsWith('[redacted: ')
      ? `${rawName}=${marker(name)}`
      : pair;
  });
  return `${out}${rest.slice(0, queryStart)}?${pairs.join('&')}${hashStart < 0 ? '' : rest.slice(hashStart)}`;
}

export type Redact = (text: string) => string;

/**
 * A function that redacts text by the rule above: the credentials of any URL in the text, then every known secret
 * (longest first, so a value containing another is hidden whole), then `Bearer …`/`Basic …` credentials and OAuth
 * token fields (`"access_token": "…"`, `refresh_token=…`).
 * Text without any of them is returned as is (the same string), cheaply.
 */
export function createRedactor(secrets: readonly Secret[] = []): Redact {
  const known = [...new Map(secrets.filter((s) => s.value.length >= MIN_SECRET_LENGTH && !TRIVIAL_VALUE.test(s.value)).map((s) => [s.value, s])).values()].sort(
    (a, b) => b.value.length - a.value.length,
  );
  return (text: string): string => {
    let out = text;
    // URLs first, so their user info is hidden whole (user name and password under one marker).
    if (out.includes('://')) out = outsideMarkers(out, (piece) => piece.replace(URL_IN_TEXT, (url) => redactUrl(url)));
    for (const secret of known) {
      if (out.includes(secret.value)) out = outsideMarkers(out, (piece) => piece.split(secret.value).join(marker(secret.label)));
    }
    if (/Bearer|Basic|Token/.test(out)) {
      out = outsideMarkers(out, (piece) => piece.replace(AUTH_SCHEME_IN_TEXT, (_m, scheme: string) => `${scheme} ${marker('credential')}`));
    }
    if (/_token|secret|assertion|verifier/.test(out)) {
      out = outsideMarkers(out, (piece) => piece.replace(OAUTH_FIELD_IN_TEXT, (_m, field: string, between: string) => `${field}${between}${marker(field)}`));
    }
    return out;
  };
}

/**
 * Applies `change` to the text between the markers already in it, never to a marker: a secret that happens to be a
 * word of a label (a user named `user`, hidden in `[redacted: user info]`) is not hidden inside it, and redacting
 * redacted text gives the same text.
 */
function outsideMarkers(text: string, change: (piece: string) => string): string {
  if (!text.includes('[redacted: ')) return change(text);
  let out = '';
  let last = 0;
  for (const found of text.matchAll(MARKER_IN_TEXT)) {
    out += change(text.slice(last, found.index)) + found[0];
    last = found.index + found[0].length;
  }
  return out + change(text.slice(last));
}

/** Applies `redact` to every string inside a JSON-like value (a report about to be printed); returns a copy. */
export function redactDeep<T>(value: T, redact: Redact): T {
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return redact(node);
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node === 'object' && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    }
    return node;
  };
  return walk(value) as T;
}
