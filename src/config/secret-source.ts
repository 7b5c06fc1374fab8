/**
 * What the config needs of the secret store to expand `${secret:NAME}` (README "Secrets"): a synchronous lookup of
 * values already available to this process. The store itself (keychain or file, chosen by the CLI) lives in
 * src/secrets; the config only sees this interface, so loading a config never decides where secrets are kept.
 */
export interface SecretSource {
  /** Where values are looked up, for messages: `the secret file /home/ada/.mcp-workbench/secrets.json`. */
  readonly where: string;
  /** The stored value, or undefined when no secret of that name is stored. Never throws. */
  get(name: string): string | undefined;
  /**
   * Set when the store could not be read at all (a corrupt file, a locked keychain): every `${secret:…}` then fails
   * its server with this reason instead of "not stored".
   */
  readonly problem?: string;
}

/**
 * A secret name: a letter, then up to 63 letters, digits, `_`, `-` or `.` (`github`, `GITHUB_TOKEN`, `openai.prod`).
 * Safe as a JSON key, a keychain account name and a shell word; no `$`, `{`, `}`, `:` or spaces, so a reference
 * `${secret:NAME}` can never be confused with another form.
 */
export const SECRET_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** The sentence every refused name gets (CLI and config alike). */
export const SECRET_NAME_RULE = 'a secret name is a letter followed by up to 63 letters, digits, "_", "-" or "."';

export function isSecretName(name: string): boolean {
  return SECRET_NAME_PATTERN.test(name);
}

/** The command that stores a secret, as every message names it. */
export function secretSetCommand(name: string): string {
  return `mcp-workbench secret set ${name}`;
}
