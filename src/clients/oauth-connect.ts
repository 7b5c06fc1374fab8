import { InsufficientScopeError, OAuthClientFlowError, RegistrationRejectedError, UnauthorizedError, type FetchLike, type OAuthClientProvider, type Transport } from '@modelcontextprotocol/client';
import { hasAuthorizationHeader, remoteEndpoint } from '../config/remote-endpoint.js';
import { OAUTH_PER_USER_URL } from '../config/server-problems.js';
import type { OAuthConfig, RemoteServerConfig } from '../config/types.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { StoredOAuthProvider } from '../oauth/provider.js';
import { BrowserSignIn, createOAuthProvider, signInCommand, type OAuthContext } from '../oauth/sign-in.js';
import { httpStatusOf } from './server-failure.js';
import { describeUrl } from './transports.js';

/** Browser sign-ins one connect may go through (a server that keeps refusing fresh tokens is not asked forever). */
const MAX_SIGN_INS_PER_CONNECT = 2;

/**
 * Whether the entry carries credentials of its own: a static `Authorization` header, or user info in its `url` (sent
 * as one, see remoteEndpoint), wins over OAuth.
 */
export function hasStaticAuthorization(server: RemoteServerConfig): boolean {
  return hasAuthorizationHeader(remoteEndpoint(server).headers);
}

/**
 * The OAuth side of one remote server's connects (README "Remote servers behind OAuth"). With `auth` (and no static
 * Authorization header) every transport gets the server's provider, so the SDK signs requests, refreshes and steps
 * up; without it a 401 carrying a `WWW-Authenticate: Bearer` challenge switches the server to the default flow. A
 * connect that the SDK stopped for a browser sign-in waits here for the loopback callback (within the connect
 * timeout) and is then retried; one that needs a sign-in no browser can give fails at once, naming `auth login`.
 */
export class OAuthConnector {
  private provider: StoredOAuthProvider | undefined;
  private signIn: BrowserSignIn | undefined;
  /** The server answered 401 with a Bearer challenge although it has no `auth`: it is signed in to as with "oauth". */
  private challenged = false;
  private lastChallenge: string | undefined;
  private signIns = 0;
  /** The browser sign-in being completed, which every call refused meanwhile waits for (see `complete`). */
  private completing: Promise<void> | undefined;
  private hadTokens = false;
  /** Refresh-token requests by the refresh token they spend: see `refreshOnce`. */
  private readonly refreshes = new Map<string, { answer: Promise<TokenAnswer>; settled?: number }>();

  constructor(
    private readonly toolbox: string,
    private readonly server: RemoteServerConfig,
    private readonly context: OAuthContext,
    private readonly label: string,
    private readonly log: Logger,
  ) {}

  private get auth(): OAuthConfig | undefined {
    if (hasStaticAuthorization(this.server)) return undefined;
    return this.server.auth ?? (this.challenged ? { grantType: 'authorization_code' } : undefined);
  }

  /** Before a connect: loads the server's sign-in (when OAuth applies to it). */
  async open(): Promise<void> {
    this.signIns = 0;
    const auth = this.auth;
    if (!auth || this.provider) return;
    this.signIn = new BrowserSignIn(this.context, this.label);
    const key = { toolbox: this.toolbox, server: this.server.name, url: this.server.url };
    this.provider = await createOAuthProvider(key, auth, this.context.store, this.signIn);
    this.hadTokens = this.provider.signedIn;
  }

  /** Whether OAuth applies to the server now (its calls may then be refused for their token and retried). */
  get active(): boolean {
    return this.provider !== undefined;
  }

  /** The provider the next transport signs its requests with, if OAuth applies. */
  get authProvider(): OAuthClientProvider | undefined {
    return this.provider;
  }

  /**
   * Wraps a transport's fetch so the challenge of a 401 from the server itself is seen. A 401 to a request that
   * carried a token also drops the remembered discovery (as the SDK asks hosts to): the server may have moved to
   * another authorization server, which the sign-in it starts must then find and register with.
   */
  readonly watch = (base: FetchLike): FetchLike => {
    const origin = new URL(this.server.url).origin;
    return async (url, init) => {
      const refreshToken = refreshTokenOf(init);
      if (refreshToken !== undefined) return this.refreshOnce(refreshToken, () => base(url, init));
      const response = await base(url, init);
      if (response.status !== 401 || new URL(String(url)).origin !== origin) return response;
      this.lastChallenge = response.headers.get('www-authenticate') ?? '';
      if (this.provider && new Headers(init?.headers).has('authorization')) await this.provider.invalidateCredentials('discovery');
      return response;
    };
  };

  /**
   * One token request per refresh token: calls made at once after the access token expired each draw a 401, and the
   * SDK refreshes for each. With rotating refresh tokens only the first of those requests can succeed; the others'
   * `invalid_grant` made the SDK drop the tokens the first had just saved, signing the user out. So a request that
   * spends a refresh token already being (or just) spent gets the same answer, and every caller saves the same tokens.
   */
  private async refreshOnce(refreshToken: string, send: () => Promise<Response>): Promise<Response> {
    const now = Date.now();
    for (const [token, entry] of this.refreshes) if (entry.settled !== undefined && now - entry.settled > REFRESH_REUSE_MS) this.refreshes.delete(token);
    let entry = this.refreshes.get(refreshToken);
    if (!entry) {
      const answer = send().then(async (response) => ({ status: response.status, statusText: response.statusText, headers: [...response.headers], body: await response.text() }));
      entry = { answer };
      this.refreshes.set(refreshToken, entry);
      const settled = entry;
      // A failure is not reused: the next request tries again (a network error may pass).
      answer.then((a) => (a.status >= 200 && a.status < 300 ? (settled.settled = Date.now()) : this.refreshes.delete(refreshToken)), () => this.refreshes.delete(refreshToken));
    }
    const { status, statusText, headers, body } = await entry.answer;
    return new Response(body, { status, statusText, headers });
  }

  /**
   * After a failed connect attempt: true when it is worth trying again on a fresh transport (OAuth was switched on
   * by a Bearer challenge, or a browser sign-in just completed); false when the failure is not OAuth's to fix.
   * @throws WorkbenchError SIGN_IN_REQUIRED (no browser: names `auth login`), SIGN_IN_FAILED (refused, timed out)
   */
  async recover(error: unknown, transport: Transport, remainingMs: number): Promise<boolean> {
    const flow = this.provider ? flowErrorOf(error) : undefined;
    if (flow) throw this.signInCannotStart(flow);
    if (!isUnauthorized(error)) return false;
    if (!this.provider) {
      if (!this.lastChallenge || !/^\s*Bearer\b/i.test(this.lastChallenge) || hasStaticAuthorization(this.server)) return false;
      if (this.server.url.includes('${user:')) throw this.perUserEndpoint();
      this.challenged = true;
      this.log.info(`${describeUrl(this.server.url)} asks for an OAuth sign-in (401 with a Bearer challenge); signing in`);
      await this.open();
      return true;
    }
    const signIn = this.signIn!;
    const command = signInCommand(this.toolbox, this.server.name, this.context.configPath);
    if (signIn.pending && this.signIns < MAX_SIGN_INS_PER_CONNECT) {
      this.signIns++;
      await this.complete(transport, remainingMs, command);
      this.log.info('signed in (OAuth); connecting');
      return true;
    }
    if (signIn.needed) throw this.needsSignIn(command);
    return false;
  }

  /**
   * After a failed call on a live connection: true when a browser sign-in the SDK started for it (step-up on
   * `insufficient_scope`, or a refresh token that no longer works) has completed, so the call — refused before it
   * ran — can be made again.
   * @throws WorkbenchError SIGN_IN_REQUIRED (no browser: names `auth login`), SIGN_IN_FAILED (refused, timed out)
   */
  async recoverCall(error: unknown, transport: Transport, waitMs: number): Promise<boolean> {
    if (!this.provider || !isUnauthorized(error)) return false;
    const command = signInCommand(this.toolbox, this.server.name, this.context.configPath);
    if (this.completing || this.signIn?.pending) {
      await this.complete(transport, waitMs, command);
      this.log.info('signed in again (OAuth); retrying the call');
      return true;
    }
    if (this.signIn?.needed) throw this.needsSignIn(command);
    return false;
  }

  /**
   * Waits for the browser's callback and redeems its code (the SDK checks `state`'s echo, `iss` and PKCE). Calls
   * refused at once all wait for the one sign-in, and its code is redeemed once (a second redemption would fail).
   */
  private complete(transport: Transport, waitMs: number, command: string): Promise<void> {
    this.completing ??= this.redeem(transport, waitMs, command).finally(() => (this.completing = undefined));
    return this.completing;
  }

  private async redeem(transport: Transport, waitMs: number, command: string): Promise<void> {
    const signIn = this.signIn!;
    try {
      await signIn.ready(waitMs);
      // The sign-in this call joined could open no browser.
      if (!signIn.pending && signIn.needed) throw this.needsSignIn(command);
      const params = await signIn.callback(waitMs, command);
      try {
        await finishAuth(transport, params);
      } catch (error) {
        throw new WorkbenchError('SIGN_IN_FAILED', `${this.label}: the sign-in came back from the browser but could not be completed: ${errorMessage(error)}. Sign in again with \`${command}\`.`, { cause: error });
      }
    } finally {
      // Only now may another sign-in start: the code was redeemed with this sign-in's verifier (or it failed).
      signIn.release();
    }
  }

  /** Ends a sign-in under way (the slot is closing). */
  async close(): Promise<void> {
    await this.signIn?.close();
  }

  /**
   * The server answered 401 and the SDK set out to sign in, but the flow stopped before any browser (no OAuth metadata,
   * a registration refused, an unsafe token endpoint): a person must give it credentials another way, or a client.
   */
  /** A Bearer challenge from an endpoint of each user's own: not signed in to (see OAUTH_PER_USER_URL). */
  private perUserEndpoint(): WorkbenchError {
    return new WorkbenchError('SIGN_IN_FAILED', `${this.label} answered 401 and asks for an OAuth sign-in, but its "url" ${OAUTH_PER_USER_URL.message}.`, {
      failure: { kind: 'http-status', httpStatus: 401 },
      hint: `To fix: ${OAUTH_PER_USER_URL.fix}. Retrying will not help until then; use other servers' tools meanwhile.`,
    });
  }

  private signInCannotStart(flow: OAuthClientFlowError): WorkbenchError {
    const what = flow instanceof RegistrationRejectedError ? `the authorization server refused to register the workbench as an OAuth client (dynamic client registration answered HTTP ${flow.status})` : flow.message;
    return new WorkbenchError('SIGN_IN_FAILED', `${this.label} at ${describeUrl(this.server.url)} answered 401 and asks for an OAuth sign-in, but the sign-in cannot start: ${what}.`, {
      cause: flow,
      failure: { kind: 'http-status', httpStatus: 401 },
      hint: 'If the server takes an API key or token instead, set it in its "headers" (an Authorization header there turns OAuth off); if it needs an OAuth client registered in advance, set "auth": { "clientId": … } (README "Remote servers behind OAuth"). Retrying will not help until then; use other servers\' tools meanwhile.',
    });
  }

  private needsSignIn(command: string): WorkbenchError {
    const why = this.hadTokens ? 'its sign-in has expired or was revoked' : 'it needs you to sign in (OAuth)';
    const browser = this.context.browser ? 'no browser can be opened here' : (this.context.noBrowserReason ?? 'the workbench runs with --no-browser');
    return new WorkbenchError(
      'SIGN_IN_REQUIRED',
      `${this.label} at ${describeUrl(this.server.url)}: ${why}, and ${browser}. Run \`${command}\` in a terminal, then use it again (the sign-in is kept in ${this.context.store.dir}).`,
      { failure: { kind: 'needs-sign-in', signInCommand: command } },
    );
  }
}

/** How long a refresh's answer is given to other requests that spend the same refresh token. */
const REFRESH_REUSE_MS = 60_000;

/** A token endpoint's answer, kept so that requests that spend the same refresh token can each read it. */
interface TokenAnswer {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: string;
}

/** The refresh token a token request spends (`grant_type=refresh_token`, as the SDK sends it), or undefined. */
function refreshTokenOf(init: RequestInit | undefined): string | undefined {
  if (init?.method !== 'POST' || !(init.body instanceof URLSearchParams)) return undefined;
  return init.body.get('grant_type') === 'refresh_token' ? (init.body.get('refresh_token') ?? undefined) : undefined;
}

/** A 401 as the SDK reports it: UnauthorizedError (a provider asked for a sign-in), or an HTTP error with status 401. */
function isUnauthorized(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof UnauthorizedError) return true;
  }
  return httpStatusOf(error) === 401;
}

/**
 * The SDK's OAuth client-flow failure (registration refused, issuer mismatch, …) in an error's cause chain, if any; not
 * a step-up that ran out of tries (a 403, reported as it is).
 */
function flowErrorOf(error: unknown): OAuthClientFlowError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof OAuthClientFlowError && !(e instanceof InsufficientScopeError)) return e;
  }
  return undefined;
}

/** Redeems the callback's code on the transport that asked for it (the SDK checks `iss` and PKCE). */
async function finishAuth(transport: Transport, params: URLSearchParams): Promise<void> {
  const finisher = transport as Transport & { finishAuth?: (params: URLSearchParams) => Promise<void> };
  if (typeof finisher.finishAuth !== 'function') throw new Error('this transport cannot finish an OAuth sign-in');
  await finisher.finishAuth(params);
}
