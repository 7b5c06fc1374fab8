/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, …), if it has one. */
export function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** What went wrong, in one line: an Error's message, or the thrown value as text. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A file-system error code in words, as every file-related message says it; undefined for a code not listed. */
export function errnoWords(code: string | undefined): string | undefined {
  return code === undefined ? undefined : WORDS[code];
}

const WORDS: Record<string, string> = {
  ENOENT: 'there is no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  ENOTDIR: 'a parent of it is not a directory',
  EISDIR: 'it is a directory, not a file',
};

/**
 * Why a network request failed, from the first system or TLS error code in its `cause` chain (`fetch` itself only
 * says "fetch failed"; the SDK wraps that once more): "connection refused (ECONNREFUSED)". Undefined when no code is
 * found.
 */
export function networkReason(error: unknown): string | undefined {
  const code = networkCode(error);
  if (code === undefined) return undefined;
  return NETWORK_WORDS[code] ? `${NETWORK_WORDS[code]} (${code})` : code;
}

/** The first system, undici or TLS error code in an error's `cause` chain (see {@link networkReason}). */
export function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    // System (`ECONNREFUSED`), undici (`UND_ERR_…`) and TLS codes only: the SDK's own codes say nothing of the network.
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+|[A-Z_]*(CERT|TLS|SSL)[A-Z_]*)$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Codes of a connection that was made and then lost (the request may have reached the server), not of one never made. */
export const CONNECTION_LOST_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED']);

const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens at that address and port',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed for now',
  ECONNRESET: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection was closed by the other side',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate cannot be verified',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is for another host name',
};
