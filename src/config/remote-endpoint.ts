import type { RemoteServerConfig } from './types.js';

/**
 * What a remote entry's requests are sent to and with (README "Remote servers"). `fetch` refuses a URL that carries
 * user info, so `https://user:pass@host/mcp` is requested as `https://host/mcp` with
 * `Authorization: Basic base64(user:pass)` — user name and password percent-decoded first, as a browser does. Every
 * request to the server (the transports, `doctor`'s probe, OAuth discovery) goes through this. An entry with user
 * info and its own `Authorization` header is a problem of that server (see findServerProblems): both cannot be sent.
 */
export interface RemoteEndpoint {
  /** The entry's `url` without user info. */
  url: string;
  /** The entry's headers, plus `Authorization: Basic …` when the `url` had user info. */
  headers: Record<string, string>;
}

export function remoteEndpoint(server: Pick<RemoteServerConfig, 'url' | 'headers'>): RemoteEndpoint {
  const split = splitUserInfo(server.url);
  if (!split.basic || hasAuthorizationHeader(server.headers)) return { url: split.url, headers: { ...server.headers } };
  return { url: split.url, headers: { ...server.headers, Authorization: split.basic } };
}

/** Whether headers hold an `Authorization` header, in any case. */
export function hasAuthorizationHeader(headers: Readonly<Record<string, string>>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
}

/** A URL without its user info, and the `Basic …` credential the user info makes (absent when it has none). */
export function splitUserInfo(url: string): { url: string; basic?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url };
  }
  if (parsed.username === '' && parsed.password === '') return { url };
  const pair = `${decoded(parsed.username)}:${decoded(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, basic: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` };
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
