import type {
  AddClientAuthentication,
  DpopSession,
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { randomBytes } from 'node:crypto';
import type { OAuthConfig } from '../config/types.js';
import { dpopSession } from './dpop-key.js';
import type { OAuthKey, OAuthRecord, OAuthStore } from './token-store.js';

/** An access token this close to its expiry (at most a tenth of its lifetime) is not sent: it is refreshed first. */
const EXPIRY_MARGIN_MS = 30_000;

/** The JWT-bearer grant (RFC 7523) of `grantType: "jwt_bearer"` with an `assertion`. */
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** What the provider delegates to for a machine-to-machine grant (the SDK's own providers). */
export type GrantDelegate = Pick<OAuthClientProvider, 'clientMetadata' | 'clientInformation' | 'prepareTokenRequest'> &
  Partial<Pick<OAuthClientProvider, 'addClientAuthentication' | 'saveAuthorizationServerUrl' | 'authorizationServerUrl' | 'saveResourceUrl' | 'resourceUrl'>>;

export interface ProviderOptions {
  key: OAuthKey;
  auth: OAuthConfig;
  store: OAuthStore;
  /** The loopback redirect URI (authorization-code grant only). */
  redirectUrl?: string;
  /** The SDK provider a machine-to-machine grant delegates client credentials and token requests to. */
  delegate?: GrantDelegate;
  /** Called with the authorization URL when the user must sign in in a browser (see sign-in.ts). */
  onRedirect: (authorizationUrl: URL, state: string | undefined) => Promise<void>;
  /**
   * Asked as a sign-in's PKCE verifier is saved: false when a browser sign-in is already under way (another request
   * refused at the same moment started it), which keeps that one's verifier, since the browser completes that one
   * (see sign-in.ts BrowserSignIn.claim). Without it every verifier is saved.
   */
  claim?: (codeVerifier: string) => boolean;
  /** Gives a claim back when its verifier could not be saved (no sign-in is then under way). */
  release?: () => void;
  clock?: () => number;
}

/**
 * The workbench's OAuthClientProvider for one server: the SDK's `auth()` runs the protocol (discovery, registration,
 * PKCE, resource indicators, refresh, step-up); this keeps what it learns in the server's token file (OAuthStore) and
 * hands the authorization URL to the sign-in. Machine-to-machine grants delegate the client's credentials and the
 * token request to the SDK's ClientCredentialsProvider / PrivateKeyJwtProvider / CrossAppAccessProvider and keep
 * only the tokens here.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  private record: OAuthRecord = {};
  private lastState: string | undefined;
  private dpopSession: Promise<DpopSession> | undefined;
  readonly clientMetadataUrl: string | undefined;
  addClientAuthentication?: AddClientAuthentication;

  private constructor(private readonly options: ProviderOptions) {
    this.clientMetadataUrl = options.auth.grantType === 'authorization_code' ? options.auth.clientMetadataUrl : undefined;
    const delegate = options.delegate;
    if (delegate?.addClientAuthentication) this.addClientAuthentication = delegate.addClientAuthentication.bind(delegate);
  }

  /** A provider with the server's stored sign-in loaded. */
  static async open(options: ProviderOptions): Promise<StoredOAuthProvider> {
    const provider = new StoredOAuthProvider(options);
    provider.record = await options.store.read(options.key);
    return provider;
  }

  get redirectUrl(): string | undefined {
    return this.options.delegate ? undefined : this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    if (this.options.delegate) return this.options.delegate.clientMetadata;
    const { auth } = this.options;
    return {
      client_name: auth.clientName ?? 'MCP Workbench',
      redirect_uris: this.options.redirectUrl ? [this.options.redirectUrl] : [],
      grant_types: auth.grantType === 'jwt_bearer' ? [JWT_BEARER_GRANT] : ['authorization_code', 'refresh_token'],
      response_types: auth.grantType === 'jwt_bearer' ? [] : ['code'],
      token_endpoint_auth_method: auth.clientSecret ? 'client_secret_basic' : 'none',
      ...(auth.scopes && auth.scopes.length > 0 && { scope: auth.scopes.join(' ') }),
    };
  }

  state(): string {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }

  async clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    if (this.options.delegate) return this.options.delegate.clientInformation(ctx);
    const { clientId, clientSecret } = this.options.auth;
    if (clientId) return { client_id: clientId, ...(clientSecret && { client_secret: clientSecret }) };
    await this.reload();
    return this.record.clientInformation;
  }

  async saveClientInformation(clientInformation: StoredOAuthClientInformation): Promise<void> {
    // Pre-registered and delegated credentials come from the config; only a registration is kept.
    if (this.options.delegate || this.options.auth.clientId) return;
    await this.change(() => ({ clientInformation, ...(this.options.redirectUrl && { redirectUrl: this.options.redirectUrl }) }));
  }

  /**
   * The stored tokens. The transport's per-request read (no `ctx`) gets none while the access token is expired or
   * about to be, so the request draws a 401 and the SDK's `auth()` refreshes (or signs in again) before it is retried:
   * an expired token is never sent. The flow's own reads (with `ctx`) re-read the file, so a sign-in made by another
   * process (`auth login`) is seen.
   */
  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    if (ctx) {
      await this.reload();
      return this.record.tokens;
    }
    const tokens = this.record.tokens;
    const expiresAt = this.expiresAt;
    if (!tokens || expiresAt === undefined) return tokens;
    const margin = Math.min(EXPIRY_MARGIN_MS, ((tokens.expires_in ?? 0) * 1000) / 10);
    return expiresAt - margin <= this.now() ? undefined : tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    await this.change(() => ({ tokens, savedAt: this.now() }));
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    // The URL's own state: sign-ins started at once each ask for a state, so the last one asked may be another's.
    await this.options.onRedirect(authorizationUrl, authorizationUrl.searchParams.get('state') ?? this.lastState);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (this.options.claim && !this.options.claim(codeVerifier)) return;
    try {
      await this.change(() => ({ codeVerifier }));
    } catch (error) {
      this.options.release?.();
      throw error;
    }
  }

  async codeVerifier(): Promise<string> {
    await this.reload();
    if (!this.record.codeVerifier) throw new Error('no PKCE code verifier was saved for this sign-in: start the sign-in again');
    return this.record.codeVerifier;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.record.discoveryState;
  }

  async saveDiscoveryState(discoveryState: OAuthDiscoveryState): Promise<void> {
    await this.change(() => ({ discoveryState }));
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const drop: Record<typeof scope, (keyof OAuthRecord)[]> = {
      all: ['tokens', 'savedAt', 'clientInformation', 'codeVerifier', 'discoveryState', 'dpopKey'],
      client: ['clientInformation'],
      tokens: ['tokens', 'savedAt'],
      verifier: ['codeVerifier'],
      discovery: ['discoveryState'],
    };
    await this.options.store.update(this.options.key, (current) => {
      const next = { ...current };
      for (const field of drop[scope]) delete next[field];
      return next;
    });
    await this.reload();
  }

  prepareTokenRequest(scope?: string): URLSearchParams | Promise<URLSearchParams | undefined> | undefined {
    if (this.options.delegate) return this.options.delegate.prepareTokenRequest?.(scope);
    const { assertion } = this.options.auth;
    if (this.options.auth.grantType !== 'jwt_bearer' || !assertion) return undefined;
    return new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion, ...(scope && { scope }) });
  }

  saveAuthorizationServerUrl(url: string): void | Promise<void> {
    return this.options.delegate?.saveAuthorizationServerUrl?.(url);
  }

  authorizationServerUrl(): string | undefined | Promise<string | undefined> {
    return this.options.delegate?.authorizationServerUrl?.();
  }

  saveResourceUrl(url: string): void | Promise<void> {
    return this.options.delegate?.saveResourceUrl?.(url);
  }

  resourceUrl(): string | undefined | Promise<string | undefined> {
    return this.options.delegate?.resourceUrl?.();
  }

  /**
   * A DPoP session (RFC 9449) where the authorization server supports DPoP or the stored token is DPoP-bound: the
   * SDK then signs a proof into token requests and presents the token with the DPoP scheme. Plain Bearer otherwise.
   */
  dpop(): Promise<DpopSession | undefined> | undefined {
    const metadata = this.record.discoveryState?.authorizationServerMetadata;
    const algs = metadata && 'dpop_signing_alg_values_supported' in metadata ? metadata.dpop_signing_alg_values_supported : undefined;
    const bound = this.record.tokens?.token_type?.toLowerCase() === 'dpop';
    if (!bound && !algs?.includes('ES256')) return undefined;
    this.dpopSession ??= dpopSession(this.record.dpopKey).then(async ({ session, created }) => {
      if (created) await this.change(() => ({ dpopKey: created }));
      return session;
    });
    return this.dpopSession;
  }

  /** Whether tokens are stored (a sign-in was made; it may have expired). */
  get signedIn(): boolean {
    return this.record.tokens !== undefined;
  }

  /** When the stored access token expires (epoch ms), if the server said. */
  get expiresAt(): number | undefined {
    const { tokens, savedAt } = this.record;
    return tokens?.expires_in !== undefined && savedAt !== undefined ? savedAt + tokens.expires_in * 1000 : undefined;
  }

  private async reload(): Promise<void> {
    this.record = await this.options.store.read(this.options.key);
  }

  private async change(fields: () => Partial<OAuthRecord>): Promise<void> {
    this.record = await this.options.store.update(this.options.key, (current) => ({ ...current, ...fields() }));
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }
}
