import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkbenchError } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import type { RefusalLog } from './http-refusals.js';

/** The HTTP face's guards: where it listens, which hosts count as loopback, allowed origins, token digests. */

export const DEFAULT_HTTP_HOST = '127.0.0.1';

export interface ListenAddress {
  host: string;
  port: number;
}

/**
 * Parses `--http [host:]port`: `3000`, `127.0.0.1:3000`, `0.0.0.0:0`, `localhost:8080`, `[::1]:3000`. The host
 * defaults to 127.0.0.1; port 0 picks a free port. Throws WorkbenchError USAGE for anything else.
 */
export function parseListenAddress(value: string): ListenAddress {
  const text = value.trim();
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):)?(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65_535) {
    throw new WorkbenchError(
      'USAGE',
      `--http expects [host:]port (e.g. 3000, 127.0.0.1:3000 or [::1]:3000), got "${value}"`,
    );
  }
  const host = match[1] ? match[1].replace(/^\[(.*)\]$/, '$1') : DEFAULT_HTTP_HOST;
  return { host, port };
}

/** localhost, 127.0.0.0/8 and ::1 (with or without brackets): addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || h === '::ffff:127.0.0.1' || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/** An `--allow-origin` value as browsers send it (scheme://host[:port]); WorkbenchError USAGE if it is not one. */
export function normalizeOrigin(value: string): string {
  try {
    const url = new URL(value.trim());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin !== 'null') return url.origin;
  } catch {
    // reported below
  }
  throw new WorkbenchError('USAGE', `--allow-origin expects an origin like https://app.example.com, got "${value}"`);
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export function hostHeaderIsLoopback(host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return isLoopbackHost(new URL(`http://${host}`).hostname);
  } catch {
    return false;
  }
}

/** Who may use the HTTP face, decided per request before any MCP handling (README "HTTP"). */
export interface HttpGate {
  /**
   * Host (on a loopback bind, against DNS rebinding) and Origin; sets the CORS headers of an allowed origin. Returns
   * false after answering 403.
   */
  checkSite(req: IncomingMessage, res: ServerResponse): boolean;
  /**
   * Who a request is from: the hex digest of the token that admitted it (each token is one user), or `local` on a
   * tokenless loopback bind. Undefined after answering 401 with the challenge.
   */
  principal(req: IncomingMessage, res: ServerResponse): string | undefined;
  /** How many users the tokens admit (one without tokens): each may hold its share of the session limit. */
  readonly users: number;
}

export interface HttpGateOptions {
  /** The address listened on. */
  host: string;
  /** Bearer tokens, comma-separated; none on a loopback bind only. */
  token?: string;
  /** Origins allowed besides the loopback ones. */
  allowedOrigins?: readonly string[];
  /** Where refusals are logged and counted. */
  refusals: RefusalLog;
}

export function createHttpGate(options: HttpGateOptions): HttpGate {
  const { refusals } = options;
  const loopbackBind = isLoopbackHost(options.host);
  // Several tokens, comma-separated, are several users: each one's modern requests get downstream servers of their own.
  const expectedDigests =
    options.token === undefined || options.token === '' ? undefined : options.token.split(',').map((t) => t.trim()).filter((t) => t !== '').map(sha256);
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map(normalizeOrigin));

  const originAllowed = (origin: string): boolean => {
    if (allowedOrigins.has(origin)) return true;
    try {
      const url = new URL(origin);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
      return allowedOrigins.has(url.origin) || isLoopbackHost(url.hostname);
    } catch {
      return false;
    }
  };

  return {
    users: expectedDigests?.length ?? 1,
    checkSite(req, res) {
      if (loopbackBind && !hostHeaderIsLoopback(req.headers.host)) {
        // A page on another site that re-points its DNS name at 127.0.0.1 (DNS rebinding) arrives with its own Host.
        refusals.refuse(req, res, { reason: 'host', message: 'Forbidden: the Host header must name this machine (localhost, 127.0.0.1 or [::1])' });
        return false;
      }
      const origin = req.headers.origin;
      if (origin === undefined) return true;
      if (!originAllowed(origin)) {
        const message = `Forbidden: origin ${quoteClientText(origin)} is not allowed (start the workbench with --allow-origin to allow it)`;
        refusals.refuse(req, res, { reason: 'origin', message });
        return false;
      }
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Expose-Headers', 'Mcp-Session-Id, WWW-Authenticate');
      return true;
    },
    principal(req, res) {
      if (!expectedDigests) return 'local';
      const header = req.headers.authorization;
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
      if (match !== null) {
        // Digests have equal length whatever was sent, so the comparison takes the same time for every wrong token.
        const presented = sha256(match[1]!);
        let found = false;
        for (const expected of expectedDigests) found = timingSafeEqual(presented, expected) || found;
        if (found) return presented.toString('hex');
      }
      const challenge = header ? 'Bearer realm="mcp-workbench", error="invalid_token"' : 'Bearer realm="mcp-workbench"';
      const message = 'Unauthorized: send "Authorization: Bearer <token>" with the workbench token';
      refusals.refuse(req, res, { reason: header ? 'token_invalid' : 'token_missing', message }, { 'WWW-Authenticate': challenge });
      return undefined;
    },
  };
}

/**
 * How logs name a principal (see HttpGate.principal): `token:` and the first 8 hex digits of its token's SHA-256 —
 * enough to tell users apart, nothing to recover a token from — or `local` for a tokenless loopback workbench.
 */
export function principalLabel(principal: string): string {
  return principal === 'local' ? 'local' : `token:${principal.slice(0, 8)}`;
}
