import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { WorkbenchError } from '../errors.js';
import { reasonOf } from '../shared/errno.js';
import { within } from '../shared/within.js';

/** The keychain service every secret is filed under; the account is the secret's name. */
export const KEYCHAIN_SERVICE = 'mcp-workbench';

/** How long the probe waits for the keychain to answer before the file store is used instead. */
export const KEYCHAIN_PROBE_MS = 3_000;

type Binding = typeof import('@napi-rs/keyring');

/** Whether the OS keychain can be used here, and why not when it cannot. */
export type KeychainProbe = { usable: true; keychain: KeychainStore } | { usable: false; reason: string };

/**
 * Finds out, quickly and without hanging, whether the OS keychain can be used: macOS Keychain, Windows Credential
 * Manager, or on Linux and the BSDs the Secret Service over the D-Bus session bus (GNOME Keyring, KWallet). On those,
 * no session bus (`DBUS_SESSION_BUS_ADDRESS` unset and no `$XDG_RUNTIME_DIR/bus`) means no keychain without asking
 * anything — a server, a container, CI. Otherwise one read of a probe entry must answer within
 * {@link KEYCHAIN_PROBE_MS}. The binding's own fallback to the Linux kernel keyring is switched off: that keyring
 * forgets everything at logout or reboot, which a store of tokens must not.
 */
export async function probeKeychain(options: { env: Record<string, string | undefined>; platform: NodeJS.Platform }): Promise<KeychainProbe> {
  const { env, platform } = options;
  if (platform !== 'darwin' && platform !== 'win32') {
    const bus = env.DBUS_SESSION_BUS_ADDRESS?.trim() || (env.XDG_RUNTIME_DIR && existsSync(join(env.XDG_RUNTIME_DIR, 'bus')));
    if (!bus) return { usable: false, reason: 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no Secret Service' };
  }
  let binding: Binding;
  try {
    binding = createRequire(import.meta.url)('@napi-rs/keyring') as Binding;
  } catch (error) {
    return { usable: false, reason: `the keychain binding @napi-rs/keyring cannot be loaded here (${reasonOf(error)})` };
  }
  const keychain = new KeychainStore(binding, platform);
  const probe = keychain.probe().then(
    () => undefined,
    (error: unknown) => `the keychain cannot be read (${reasonOf(error)})`,
  );
  const answered = await within(probe, KEYCHAIN_PROBE_MS);
  const failed = answered ? answered.value : `the keychain did not answer within ${KEYCHAIN_PROBE_MS} ms`;
  return failed === undefined ? { usable: true, keychain } : { usable: false, reason: failed };
}

/** Secrets in the OS keychain, one entry per name under the service {@link KEYCHAIN_SERVICE}. */
export class KeychainStore {
  readonly where = 'the OS keychain';

  constructor(
    private readonly binding: Binding,
    private readonly platform: NodeJS.Platform,
  ) {}

  private get options() {
    // Only Linux reads it: the Secret Service, never the kernel keyring (see probeKeychain).
    return this.platform === 'linux' ? { linux: { store: 'secret-service' as const } } : undefined;
  }

  /** One asynchronous read, so a keychain that does not answer cannot block the event loop. */
  async probe(): Promise<void> {
    await new this.binding.AsyncEntry(KEYCHAIN_SERVICE, '(probe)', this.options).getPassword();
  }

  /** The value stored under `name`, or undefined; a read error counts as not stored. Synchronous, after a probe. */
  get(name: string): string | undefined {
    try {
      return new this.binding.Entry(KEYCHAIN_SERVICE, name, this.options).getPassword() ?? undefined;
    } catch {
      return undefined;
    }
  }

  /** Names stored under the service (the values the binding returns along are dropped at once). */
  list(): string[] {
    try {
      return this.binding.findCredentials(KEYCHAIN_SERVICE).map((c) => c.account).filter((a) => a !== '(probe)');
    } catch (error) {
      throw new WorkbenchError('SECRET_STORE_FAILED', `Cannot list the secrets in ${this.where}: ${reasonOf(error)}.`, { cause: error });
    }
  }

  async set(name: string, value: string): Promise<void> {
    try {
      await new this.binding.AsyncEntry(KEYCHAIN_SERVICE, name, this.options).setPassword(value);
    } catch (error) {
      throw new WorkbenchError('SECRET_STORE_FAILED', `Cannot store the secret "${name}" in ${this.where}: ${reasonOf(error)}. Nothing was changed.`, { cause: error });
    }
  }

  async remove(name: string): Promise<boolean> {
    try {
      return await new this.binding.AsyncEntry(KEYCHAIN_SERVICE, name, this.options).deleteCredential();
    } catch (error) {
      throw new WorkbenchError('SECRET_STORE_FAILED', `Cannot remove the secret "${name}" from ${this.where}: ${reasonOf(error)}.`, { cause: error });
    }
  }
}
