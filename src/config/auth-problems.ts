import type { JsonPath } from './expand-env.js';
import { isRecord } from './text.js';

/**
 * The rules for a server's `auth` object that JSON Schema does not express: which keys each grant needs and which
 * belong to another grant (README "Remote servers behind OAuth"). Names keys, never values.
 */
export function authProblems(auth: unknown, path: JsonPath): { path: JsonPath; message: string }[] {
  if (!isRecord(auth)) return [];
  const at = [...path, 'auth'];
  const has = (key: string): boolean => auth[key] !== undefined;
  const grant = typeof auth.grantType === 'string' ? auth.grantType : 'authorization_code';
  const problems: string[] = [];
  const only = (keys: string[], grantType: string): void => {
    for (const key of keys.filter(has)) problems.push(`"${key}" applies only to "grantType": "${grantType}" (this server uses "${grant}")`);
  };
  if (grant === 'client_credentials') {
    if (!has('clientId')) problems.push('"grantType": "client_credentials" needs "clientId" (the client registered with the authorization server)');
    if (!has('clientSecret') && !has('privateKeyPem')) {
      problems.push('"grantType": "client_credentials" needs "clientSecret" (client_secret_basic) or "privateKeyPem" (private_key_jwt)');
    }
    if (has('clientSecret') && has('privateKeyPem')) problems.push('give either "clientSecret" or "privateKeyPem", not both');
  } else only(['privateKeyPem', 'signingAlgorithm'], 'client_credentials');
  if (grant === 'jwt_bearer') {
    if (!has('assertion') && !has('identityProvider')) {
      problems.push('"grantType": "jwt_bearer" needs "assertion" (a JWT to present) or "identityProvider" (enterprise-managed authorization)');
    }
    if (has('assertion') && has('identityProvider')) problems.push('give either "assertion" or "identityProvider", not both');
    if (has('identityProvider') && !has('clientId')) problems.push('"identityProvider" needs "clientId": the client registered with the server\'s authorization server');
    const idp = auth.identityProvider;
    if (isRecord(idp) && idp.issuer === undefined && idp.tokenEndpoint === undefined) {
      problems.push('"identityProvider" needs "issuer" (its token endpoint is discovered) or "tokenEndpoint"');
    }
  } else only(['assertion', 'identityProvider'], 'jwt_bearer');
  if (grant !== 'authorization_code') only(['redirectPort', 'clientMetadataUrl'], 'authorization_code');
  return problems.map((message) => ({ path: at, message }));
}
