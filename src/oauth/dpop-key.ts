import { DpopSession, generateDpopKeyPair, type DpopKeyPair } from '@modelcontextprotocol/client';
import { webcrypto } from 'node:crypto';

/** A DPoP key as kept in a server's token file (0600): a DPoP-bound token is only usable with its key. */
export interface StoredDpopKey {
  alg: 'ES256';
  privateJwk: webcrypto.JsonWebKey;
  publicJwk: webcrypto.JsonWebKey;
  thumbprint: string;
}

const ES256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/**
 * A DPoP session (RFC 9449) on the stored key, or on a new ES256 key made with the SDK (returned to be stored, so
 * tokens bound to it keep working after a restart). The proofs themselves are the SDK's.
 */
export async function dpopSession(stored: StoredDpopKey | undefined): Promise<{ session: DpopSession; created?: StoredDpopKey }> {
  if (stored) return { session: await DpopSession.create({ keyPair: await importKey(stored) }) };
  const keyPair = await generateDpopKeyPair({ alg: 'ES256', extractable: true });
  const privateJwk = await webcrypto.subtle.exportKey('jwk', keyPair.privateKey as webcrypto.CryptoKey);
  const created: StoredDpopKey = { alg: 'ES256', privateJwk, publicJwk: keyPair.publicJwk as webcrypto.JsonWebKey, thumbprint: keyPair.thumbprint };
  return { session: await DpopSession.create({ keyPair }), created };
}

async function importKey(stored: StoredDpopKey): Promise<DpopKeyPair> {
  const privateKey = await webcrypto.subtle.importKey('jwk', stored.privateJwk, ES256, false, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('jwk', stored.publicJwk, ES256, true, ['verify']);
  return { privateKey, publicKey, publicJwk: stored.publicJwk, thumbprint: stored.thumbprint, alg: stored.alg } as DpopKeyPair;
}
