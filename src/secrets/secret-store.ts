import { WorkbenchError } from '../errors.js';
import type { SecretSource } from '../config/secret-source.js';
import type { Logger } from '../log.js';
import { FileSecretStore } from './file-store.js';
import { type KeychainStore, probeKeychain } from './keychain-store.js';
import { resolveSecretsPath } from './secrets-path.js';

/** The variable that chooses the backend: `auto` (default), `file` or `keychain`. */
export const SECRET_STORE_VARIABLE = 'MCP_WORKBENCH_SECRET_STORE';

export type StoreKind = 'keychain' | 'file';

/** A stored secret's name and which store holds it; never its value. */
export interface ListedSecret {
  name: string;
  store: StoreKind;
}

/**
 * The secret store the CLI and the config loader use (README "Secrets"). `set` writes to one store (the keychain
 * when it is in use, else the file); lookups, `list` and `remove` also see the file in `auto` mode, so secrets stored
 * while no keychain was usable (a headless session) keep working when one is.
 */
export interface SecretStore {
  /** Where `set` writes. */
  readonly kind: StoreKind;
  /** Which backend was chosen and why, in one sentence (`secret list` prints it). */
  readonly choice: string;
  /** The secret file (used in `file` and `auto` mode). */
  readonly filePath: string;
  /** A snapshot of every stored value for expanding a config; never throws (an unreadable store is its `problem`). */
  source(): Promise<SecretSource>;
  list(): Promise<ListedSecret[]>;
  set(name: string, value: string): Promise<StoreKind>;
  /** The stores it was removed from; empty when no store held it. */
  remove(name: string): Promise<StoreKind[]>;
}

export interface OpenSecretStoreOptions {
  env: Record<string, string | undefined>;
  homedir: string;
  cwd: string;
  platform: NodeJS.Platform;
  log: Logger;
}

/**
 * Chooses the backend from `MCP_WORKBENCH_SECRET_STORE`: `file` — the secret file only; `keychain` — the OS keychain
 * only, and an error when it is not usable; `auto` (default, also when unset or blank) — the keychain when
 * {@link probeKeychain} finds it usable, else the file.
 *
 * @throws WorkbenchError SECRET_STORE_FAILED for an unknown value, or `keychain` where none is usable.
 */
export async function openSecretStore(options: OpenSecretStoreOptions): Promise<SecretStore> {
  const mode = (options.env[SECRET_STORE_VARIABLE]?.trim() || 'auto').toLowerCase();
  const { path, isDefault } = resolveSecretsPath(options);
  const file = new FileSecretStore(path, { log: options.log, ownDirectory: isDefault });
  if (mode === 'file') return composite(undefined, file, `the secret file ${path} (${SECRET_STORE_VARIABLE}=file)`);
  if (mode !== 'auto' && mode !== 'keychain') {
    throw new WorkbenchError(
      'SECRET_STORE_FAILED',
      `${SECRET_STORE_VARIABLE}="${options.env[SECRET_STORE_VARIABLE]}" is not a secret store: use auto (the default), file or keychain.`,
    );
  }
  const probe = await probeKeychain(options);
  if (probe.usable) return composite(probe.keychain, mode === 'auto' ? file : undefined, `the OS keychain (${SECRET_STORE_VARIABLE}=${mode})`);
  if (mode === 'keychain') {
    throw new WorkbenchError('SECRET_STORE_FAILED', `${SECRET_STORE_VARIABLE}=keychain, but no OS keychain is usable here: ${probe.reason}. Use ${SECRET_STORE_VARIABLE}=file (or auto) to keep secrets in ${path}.`);
  }
  return composite(undefined, file, `the secret file ${path} (no OS keychain: ${probe.reason})`);
}

function composite(keychain: KeychainStore | undefined, file: FileSecretStore | undefined, choice: string): SecretStore {
  const filePath = file?.path ?? '';
  return {
    kind: keychain ? 'keychain' : 'file',
    choice,
    filePath,
    source: async () => {
      const read = file ? await file.read() : { secrets: new Map<string, string>() };
      const where = keychain ? (file ? `the OS keychain or the secret file ${filePath}` : keychain.where) : `the secret file ${filePath}`;
      if ('problem' in read && !keychain) return { where, get: () => undefined, problem: `it ${read.problem}` };
      const fromFile = 'secrets' in read ? read.secrets : new Map<string, string>();
      return { where, get: (name) => keychain?.get(name) ?? fromFile.get(name) };
    },
    list: async () => {
      const listed: ListedSecret[] = keychain ? keychain.list().map((name) => ({ name, store: 'keychain' as const })) : [];
      if (file) {
        const read = await file.read();
        if ('problem' in read) throw new WorkbenchError('SECRET_STORE_FAILED', `The secret file ${filePath} ${read.problem}; repair it, or move it away and store the secrets again.`);
        listed.push(...[...read.secrets.keys()].map((name) => ({ name, store: 'file' as const })));
      }
      return listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.store < b.store ? -1 : 1));
    },
    set: async (name, value) => {
      if (keychain) {
        await keychain.set(name, value);
        return 'keychain';
      }
      await file!.set(name, value);
      return 'file';
    },
    remove: async (name) => {
      const from: StoreKind[] = [];
      if (keychain && (await keychain.remove(name))) from.push('keychain');
      if (file && (await file.remove(name))) from.push('file');
      return from;
    },
  };
}
