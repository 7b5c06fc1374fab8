import { createHash } from 'node:crypto';
import { WorkbenchError } from '../errors.js';

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
