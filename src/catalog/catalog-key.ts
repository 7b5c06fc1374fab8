import { createHash } from 'node:crypto';
import { serverCacheKey } from '../clients/era-memory.js';
import { NOT_INHERITED_ENV } from '../clients/transports.js';
import type { ServerConfig } from '../config/types.js';
import { isSecretHeader, isTrivialValue, namesSecret, urlCredentials } from '../shared/redact.js';

/**
 * The launch key (see serverCacheKey): toolbox and server names, transport, command, args, cwd, URL and the NAMES of
 * env variables and headers. It names the program an entry runs, so it keys what does not depend on credentials or
 * on the client: the server's protocol era.
 */
export const cacheKey = serverCacheKey;

/**
 * The key of one tool list (README "Catalog cache"): the launch key, a hash of the credentials the server runs with —
 * one authorization context, so a list a server marked `private` is never reused under other credentials — and the
 * capabilities it was listed for (see capabilitiesKey: a server may list other tools for other clients; for an entry
 * naming `${user:…}`, `capabilities` names the user too: see ClientManager.listContext). Only the hash is kept: no
 * value is ever written.
 *
 * Credentials are the values of env variables and headers that name one (by the redaction rule, or PAT, DSN,
 * connection string), that hold a `${secret:NAME}`, or whose value holds one (URL user info or a secret query
 * parameter, `Bearer …`, `password=…`); for an `inheritEnv` server, also the workbench's own variables of that kind —
 * never its whole environment (PWD, SHLVL, a login's session plumbing change all the time and name no account).
 */
export function catalogKey(toolbox: string, server: ServerConfig, capabilities: string, workbenchEnv: Readonly<Record<string, string | undefined>> = {}): string {
  const values = server.type === 'stdio' ? server.env : server.headers;
  const namesIt = server.type === 'stdio' ? namesCredential : isSecretHeader;
  const holdsStoredSecret = new Set(server.secretEntries);
  const credentials = Object.keys(values)
    .filter((name) => namesIt(name) || holdsStoredSecret.has(name) || holdsCredential(values[name]!))
    .sort()
    .map((name) => [name, values[name]]);
  const inherited = server.type === 'stdio' && server.inheritEnv ? inheritedCredentials(workbenchEnv, values) : [];
  // How an OAuth server is signed in to is part of its authorization context too (hashed like the rest).
  const auth = server.type === 'stdio' ? undefined : server.auth;
  // Without inherited credentials or sign-in, the key is what it was before either was keyed (caches stay valid).
  const parts = [serverCacheKey(toolbox, server), credentials, capabilities, ...(auth ? [auth] : []), ...(inherited.length > 0 ? [{ inherited }] : [])];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/**
 * Variables of a login's session plumbing (agents, terminals, desktops, editors) and the shell's working directory (PWD
 * reads as "password" to the redaction rule): they change all the time and name no account.
 */
const SESSION_PLUMBING = /^(?:SSH_|XDG_|DBUS_|GPG_|GNOME_|KDE_|KITTY_|VSCODE_|TERM_|ITERM_|WT_|TMUX|LC_|__CF|(?:OLD)?PWD$|SECURITYSESSIONID$|SESSION_MANAGER$|DESKTOP_SESSION$|WINDOWID$)|_(?:SOCK|PID)$/;

/**
 * The workbench's variables an `inheritEnv` child gets that carry credentials (the entry's own env wins), by name —
 * never those it is not given (NOT_INHERITED_ENV).
 */
function inheritedCredentials(env: Readonly<Record<string, string | undefined>>, own: Readonly<Record<string, string>>): string[][] {
  return Object.keys(env)
    .filter((name) => !(name in own) && env[name] !== undefined && !SESSION_PLUMBING.test(name) && !NOT_INHERITED_ENV.has(name))
    .filter((name) => namesCredential(name) || holdsCredential(env[name]!))
    .sort()
    .map((name) => [name, env[name]!]);
}

/** Name parts that say "credential" though the redaction rule has no word for them: GH_PAT, SENTRY_DSN. */
const CREDENTIAL_PARTS = new Set(['pat', 'pats', 'dsn']);

/** Whether an env variable's name names a credential: the redaction rule's names, PAT, DSN, a connection string. */
export function namesCredential(name: string): boolean {
  if (namesSecret(name) || /conn(?:ection)?[^a-z]*str(?:ing)?/i.test(name)) return true;
  return name.split(/[^A-Za-z0-9]+/).some((part) => CREDENTIAL_PARTS.has(part.toLowerCase()));
}

const URL_IN_VALUE = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>]+/g;
const AUTH_SCHEME = /\b(?:Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/;
const PAIR = /(?:^|[;&,\s?])([A-Za-z][A-Za-z0-9 _.-]*?)\s*=\s*[^;&,\s]/g;

/**
 * Whether a value holds a credential whatever it is called (as the redaction rule sees it): a URL with user info or a
 * secret-looking query parameter (postgres://alice:pw@db, https://key@sentry.io/1), a `Bearer …`/`Basic …` credential,
 * or a `name=value` pair whose name names a secret (`Server=db;Password=…`).
 */
export function holdsCredential(value: string): boolean {
  if (value === '' || isTrivialValue(value)) return false;
  for (const [url] of value.matchAll(URL_IN_VALUE)) {
    const found = urlCredentials(url);
    if (found.userInfo || found.params.length > 0) return true;
  }
  if (AUTH_SCHEME.test(value)) return true;
  for (const [, name] of value.matchAll(PAIR)) if (namesSecret(name!.trim())) return true;
  return false;
}
