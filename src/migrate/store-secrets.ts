import { SECRET_NAME_PATTERN } from '../config/secret-source.js';
import { literalSecrets, withReference } from './literal-secrets.js';

/** A literal credential an import takes out of an entry, to be stored under `name` before the config is saved. */
export interface MovedSecret {
  name: string;
  value: string;
  /** `server "github" env GITHUB_TOKEN`: where it was, for notes (never the value). */
  where: string;
}

/**
 * `migrate --from … --secrets store`: replaces every literal credential of the imported entries (an env entry or
 * header whose name names a secret, a URL's user info or secret query parameter, an argument's value after a flag that names one, written without `${`) by `${secret:NAME}` and returns the values to store. NAME is
 * `<toolbox>.<server>.<entry>` with characters a secret name cannot hold turned into `_` (README "Secret store").
 * Returns new entries; the input is not modified. Pure: storing is the caller's, and happens only with `--write`.
 */
export function moveLiteralSecrets(
  toolbox: string,
  servers: readonly [string, Record<string, unknown>][],
): { servers: [string, Record<string, unknown>][]; moved: MovedSecret[]; notes: string[] } {
  const moved: MovedSecret[] = [];
  const notes: string[] = [];
  const taken = new Set<string>();
  const result = servers.map(([server, entry]): [string, Record<string, unknown>] => {
    const found = literalSecrets(entry);
    if (found.length === 0) return [server, entry];
    let copy: Record<string, unknown> = { ...entry };
    for (const secretFound of found) {
      const { key, name, value, what } = secretFound;
      const secret = uniqueSecretName(`${toolbox}.${server}.${key === 'url' ? `url.${name}` : name}`, taken);
      copy = withReference(copy, secretFound, `\${secret:${secret}}`, false);
      const where = `server "${server}" ${what}`;
      moved.push({ name: secret, value, where });
      notes.push(`${where}: its literal credential is replaced by \${secret:${secret}} and goes to the secret store`);
    }
    return [server, copy];
  });
  return { servers: result, moved, notes };
}

function uniqueSecretName(wanted: string, taken: Set<string>): string {
  let base = wanted.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (!/^[A-Za-z]/.test(base)) base = `s${base}`;
  base = base.slice(0, 64);
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 64 - String(i).length - 1)}-${i}`;
  taken.add(name);
  if (!SECRET_NAME_PATTERN.test(name)) throw new Error(`internal: made an invalid secret name ${name}`);
  return name;
}
