import { createHash } from 'node:crypto';
import { ClientCredentialsProvider, CrossAppAccessProvider, PrivateKeyJwtProvider, discoverAndRequestJwtAuthGrant, requestJwtAuthorizationGrant } from '@modelcontextprotocol/client';
import type { OAuthConfig } from '../config/types.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import { openBrowser } from './browser.js';
import { LoopbackReceiver, freeLoopbackPort, loopbackRedirect } from './loopback.js';
import { StoredOAuthProvider, type GrantDelegate } from './provider.js';
import type { OAuthKey, OAuthStore } from './token-store.js';
import { within } from '../shared/within.js';
import { shellQuote } from '../shared/shell-quote.js';

/** What signing in needs from the process: where tokens live, whether a browser may be opened, how to tell the user. */
export interface OAuthContext {
  store: OAuthStore;
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
  /** false with `serve --no-browser`: a server that needs a sign-in fails at once, naming `auth login`. */
  browser: boolean;
  /** Why no browser is opened when `browser` is false, for that message (default: `serve --no-browser`'s). */
  noBrowserReason?: string;
  /**
   * When no browser can be opened here (no `$BROWSER`, no display: SSH, a container), print the URL and wait for the
   * callback anyway — `auth login`, where a person reads the terminal — instead of failing at once.
   */
  printUrlWithoutBrowser?: boolean;
  /** Tells the user something they must see (the authorization URL), unredacted: it holds no secret. */
  announce(message: string): void;
  /** The config file served, named in the sign-in command (`auth login` uses only a config it is given). */
  configPath?: string;
}

/** The command that signs in to one server (with `--config` when the config file is known). */
export function signInCommand(toolbox: string, server: string, configPath?: string): string {
  return `mcp-workbench auth login ${toolbox}/${server}${configPath === undefined ? '' : ` --config ${shellQuote(configPath)}`}`;
}

/**
 * One browser sign-in as the SDK asks for it (`redirectToAuthorization`): listens on the loopback redirect, opens
 * the browser on the authorization URL (and tells the user the URL), and hands back the callback. Without a browser it
 * only notes that a sign-in is needed, so the connect can fail at once with the command that signs in.
 */
export class BrowserSignIn {
  private receiver: LoopbackReceiver | undefined;
  /**
   * The sign-in under way, from the moment the SDK saves its PKCE verifier (see `claim`): its code challenge, and when
   * its browser has been opened (or not).
   */
  private underWay: { challenge: string; opened: Promise<void>; open: () => void } | undefined;
  /** Code challenges of authorizations that joined the sign-in under way: their redirects open nothing. */
  private readonly joined = new Set<string>();
  /** A sign-in was needed and no browser could be used for it. */
  needed = false;

  constructor(
    private readonly context: OAuthContext,
    private readonly label: string,
  ) {}

  /**
   * Called as the SDK saves a sign-in's PKCE verifier, before it asks for the browser: true when this sign-in is the
   * one (none is under way), so the verifier is kept; false when one is, so the verifier of the sign-in the browser
   * completes stays. Calls refused at the same moment each make the SDK start a sign-in; the first one's browser
   * serves them all (each awaits its callback), and no second window opens.
   */
  claim(codeVerifier: string): boolean {
    const challenge = createHash('sha256').update(codeVerifier).digest('base64url');
    if (this.underWay) {
      this.joined.add(challenge);
      return false;
    }
    let open = (): void => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    this.underWay = { challenge, opened, open };
    return true;
  }

  /** The sign-in under way is over (redeemed, refused, timed out, or its verifier could not be saved). */
  release(): void {
    this.underWay?.open();
    this.underWay = undefined;
    this.joined.clear();
  }

  async redirect(authorizationUrl: URL, state: string | undefined): Promise<void> {
    const underWay = this.underWay;
    const challenge = authorizationUrl.searchParams.get('code_challenge') ?? '';
    // Another call's sign-in, started while one was under way: it joins that one (see `claim`), even if that one has
    // ended in the few steps between its verifier and this redirect (its verifier was never saved).
    if (this.joined.delete(challenge) || (underWay && challenge !== underWay.challenge)) return;
    try {
      await this.open(authorizationUrl, state);
    } finally {
      underWay?.open();
      if (!this.receiver && this.underWay === underWay) this.underWay = undefined;
    }
  }

  private async open(authorizationUrl: URL, state: string | undefined): Promise<void> {
    await this.receiver?.close();
    this.receiver = undefined;
    this.needed = false;
    const redirect = authorizationUrl.searchParams.get('redirect_uri');
    if (!this.context.browser || !redirect) {
      this.needed = true;
      return;
    }
    this.receiver = await LoopbackReceiver.listen(Number(new URL(redirect).port), state, this.label);
    if (!(await openBrowser(authorizationUrl.href, this.context))) {
      if (this.context.printUrlWithoutBrowser) {
        const port = new URL(redirect).port;
        this.context.announce(
          `no browser could be opened here: open this URL in a browser to sign in to ${this.label}: ${authorizationUrl.href} ` +
            `(it sends you back to ${redirect}; from a browser on another machine, forward that port first: ssh -L ${port}:127.0.0.1:${port} <this host>)`,
        );
        return;
      }
      await this.close();
      this.needed = true;
      return;
    }
    this.context.announce(`sign in to ${this.label} in the browser that opened (if none did, open this URL): ${authorizationUrl.href}`);
  }

  /** Whether a browser sign-in is under way (its callback can be awaited). */
  get pending(): boolean {
    return this.receiver !== undefined || this.underWay !== undefined;
  }

  /** Waits, at most `ms`, until the sign-in under way has asked for its browser (after which `pending` says if it is on). */
  async ready(ms: number): Promise<void> {
    if (this.underWay) await within(this.underWay.opened, ms);
  }

  /**
   * The callback of the sign-in under way, within `ms` (call `ready` first).
   * @throws WorkbenchError SIGN_IN_FAILED when the authorization server answered with an error or time ran out
   */
  async callback(ms: number, command: string): Promise<URLSearchParams> {
    try {
      const receiver = this.receiver;
      if (!receiver) throw new WorkbenchError('SIGN_IN_FAILED', `${this.label}: the sign-in did not start. Retry the call, or sign in first with \`${command}\`.`);
      const params = (
        await within(receiver.wait(), ms).catch((error: unknown) => {
          // Ended before the browser came back (the server's connection closed):
          // a refusal the model can read, never a protocol error.
          throw new WorkbenchError('SIGN_IN_FAILED', `${this.label}: the sign-in in the browser ended before it completed (${errorMessage(error)}). Retry the call, or sign in first with \`${command}\`.`, { cause: error });
        })
      )?.value;
      if (!params) {
        throw new WorkbenchError('SIGN_IN_FAILED', `${this.label}: the sign-in in the browser was not completed within ${ms} ms. Retry, raise "connectTimeoutMs", or sign in first with \`${command}\`.`);
      }
      const error = params.get('error');
      if (error) {
        const description = params.get('error_description');
        throw new WorkbenchError('SIGN_IN_FAILED', `${this.label}: the authorization server refused the sign-in (${error}${description ? `: ${description}` : ''}). Sign in again with \`${command}\`.`);
      }
      return params;
    } finally {
      // The receiver's work is done; the sign-in stays under way until its code is redeemed (`release`), so no call
      // refused meanwhile starts another one and saves its verifier over this one's.
      await this.closeReceiver();
    }
  }

  /** Ends the sign-in under way (the slot is closing). */
  async close(): Promise<void> {
    this.release();
    await this.closeReceiver();
  }

  private async closeReceiver(): Promise<void> {
    const receiver = this.receiver;
    this.receiver = undefined;
    await receiver?.close();
  }
}

/**
 * The provider for one server's `auth` (README "Remote servers behind OAuth"): the authorization-code grant with a
 * loopback redirect on `redirectPort`, else on the port its registration was made with, else a free one; the
 * machine-to-machine grants through the SDK's providers.
 */
export async function createOAuthProvider(key: OAuthKey, auth: OAuthConfig, store: OAuthStore, signIn: BrowserSignIn): Promise<StoredOAuthProvider> {
  const onRedirect = (url: URL, state: string | undefined): Promise<void> => signIn.redirect(url, state);
  const claim = (codeVerifier: string): boolean => signIn.claim(codeVerifier);
  const release = (): void => signIn.release();
  if (auth.grantType !== 'authorization_code') return StoredOAuthProvider.open({ key, auth, store, onRedirect, claim, release, delegate: grantDelegate(auth) });
  const record = await store.read(key);
  const redirectUrl = auth.redirectPort ? loopbackRedirect(auth.redirectPort) : (record.redirectUrl ?? loopbackRedirect(await freeLoopbackPort()));
  if (record.clientInformation && record.redirectUrl !== redirectUrl) {
    // Registered for another redirect URI: the authorization server would refuse this one; register again.
    await store.update(key, ({ clientInformation: _dropped, ...rest }) => rest);
  }
  return StoredOAuthProvider.open({ key, auth, store, onRedirect, claim, release, redirectUrl });
}

function grantDelegate(auth: OAuthConfig): GrantDelegate | undefined {
  const scope = auth.scopes?.join(' ') || undefined;
  const common = { clientId: auth.clientId ?? '', ...(auth.clientName && { clientName: auth.clientName }), ...(scope && { scope }) };
  if (auth.grantType === 'client_credentials') {
    return auth.privateKeyPem
      ? new PrivateKeyJwtProvider({ ...common, privateKey: auth.privateKeyPem, algorithm: auth.signingAlgorithm ?? 'RS256' })
      : new ClientCredentialsProvider({ ...common, clientSecret: auth.clientSecret ?? '' });
  }
  const idp = auth.identityProvider;
  if (!idp) return undefined;
  return new CrossAppAccessProvider({
    clientId: auth.clientId ?? '',
    clientSecret: auth.clientSecret ?? '',
    ...(auth.clientName && { clientName: auth.clientName }),
    assertion: async (context) => {
      const request = { audience: context.authorizationServerUrl, resource: context.resourceUrl, idToken: idp.idToken, clientId: idp.clientId, ...(idp.clientSecret && { clientSecret: idp.clientSecret }), ...(context.scope && { scope: context.scope }), fetchFn: context.fetchFn };
      const grant = idp.tokenEndpoint
        ? await requestJwtAuthorizationGrant({ ...request, tokenEndpoint: idp.tokenEndpoint })
        : await discoverAndRequestJwtAuthGrant({ ...request, idpUrl: idp.issuer ?? '' });
      return grant.jwtAuthGrant;
    },
  });
}
