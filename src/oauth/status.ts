import type { WorkbenchConfig } from '../config/types.js';
import type { OAuthStore } from './token-store.js';

/** One OAuth server's sign-in as `auth status` shows it (never a token). */
export interface SignInStatus {
  /** `toolbox/server`. */
  server: string;
  url: string;
  signedIn: boolean;
  /** When the access token expires (ISO 8601), if the server said. */
  expires?: string;
  /** Whether a refresh token is kept (the access token is renewed without a browser). */
  refreshable?: boolean;
  scopes?: string[];
  /** The token file. */
  file?: string;
  /** Configured: with `auth` (or found signed in although it has none: it answered a Bearer challenge). */
  configured: boolean;
}

/**
 * The sign-in of every remote server of the config that has `auth` or a stored sign-in, in config order, then the
 * stored sign-ins that match no server of the config any more (they can be removed with `auth logout`).
 */
export async function signInStatus(config: WorkbenchConfig, store: OAuthStore): Promise<SignInStatus[]> {
  const stored = await store.list();
  const listed: SignInStatus[] = [];
  const seen = new Set<string>();
  for (const toolbox of config.toolboxes) {
    for (const server of toolbox.servers) {
      if (server.type === 'stdio') continue;
      const entry = stored.find((s) => s.toolbox === toolbox.name && s.server === server.name && s.url === server.url);
      if (!server.auth && !entry?.record.tokens) continue;
      if (entry) seen.add(entry.file);
      listed.push(describe(`${toolbox.name}/${server.name}`, server.url, entry, true));
    }
  }
  for (const entry of stored) {
    if (!seen.has(entry.file) && entry.record.tokens) listed.push(describe(`${entry.toolbox}/${entry.server}`, entry.url, entry, false));
  }
  return listed;
}

function describe(server: string, url: string, entry: Awaited<ReturnType<OAuthStore['list']>>[number] | undefined, configured: boolean): SignInStatus {
  const tokens = entry?.record.tokens;
  if (!tokens) return { server, url, signedIn: false, configured };
  const savedAt = entry.record.savedAt;
  const expires = tokens.expires_in !== undefined && savedAt !== undefined ? new Date(savedAt + tokens.expires_in * 1000).toISOString() : undefined;
  return {
    server,
    url,
    signedIn: true,
    ...(expires && { expires }),
    refreshable: tokens.refresh_token !== undefined,
    ...(tokens.scope && { scopes: tokens.scope.split(' ').filter(Boolean) }),
    file: entry.file,
    configured,
  };
}
