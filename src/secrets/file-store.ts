import { chmod, mkdir, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { folderBlocker, readOnlyReason } from '../shared/read-only.js';
import { type ParseError, parseTree } from 'jsonc-parser';
import { describeDuplicateKeys, lineAndColumn, parseJsonText } from '../config/parse-json.js';
import { isSecretName } from '../config/secret-source.js';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { acquireLock, lockOptions } from '../shared/file-lock.js';
import { errnoCode, reasonOf } from '../shared/errno.js';

/** Format 1: `{ "format": 1, "secrets": { "NAME": "value", … } }`, names sorted. */
const FORMAT = 1;

/** What a read found: the secrets, or why the file cannot be used (it is then never written over). */
export type FileRead = { secrets: Map<string, string>; extra?: Record<string, unknown>; bom?: true } | { problem: string };

/**
 * The secret file (README "Secrets"): a JSON object of names to values, mode 0600 in a directory of mode 0700.
 * Every change is a read-modify-write under the same lock as the tool-state file (`<file>.lock`, state/lock) and
 * lands with write-file-atomic (temp file beside it, fsync, rename), so two `secret set` at once both land and a
 * crash leaves the old file or the new one. A file that does not parse is never written over: changes are refused
 * with the reason until it is repaired or moved away.
 */
export class FileSecretStore {
  constructor(
    readonly path: string,
    private readonly options: {
      log: Logger;
      /** The directory is the workbench's own (`~/.mcp-workbench`): tighten it to 0700 if it is looser. */
      ownDirectory: boolean;
    },
  ) {}

  /** Reads the file; a missing file holds no secrets. Never throws. */
  async read(): Promise<FileRead> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return { secrets: new Map() };
      return { problem: `cannot read it: ${reasonOf(error)}` };
    }
    return parseSecretsFile(text);
  }

  /** Stores `value` under `name`, replacing any value it had. @throws WorkbenchError SECRET_STORE_FAILED */
  async set(name: string, value: string): Promise<void> {
    await this.change((secrets) => void secrets.set(name, value));
  }

  /** Removes `name`; false when it was not stored (nothing is written then). @throws WorkbenchError SECRET_STORE_FAILED */
  async remove(name: string): Promise<boolean> {
    let removed = false;
    await this.change((secrets) => {
      removed = secrets.delete(name);
      return removed;
    });
    return removed;
  }

  private async change(apply: (secrets: Map<string, string>) => boolean | void): Promise<void> {
    await this.prepareDirectory();
    const release = await acquireLock(this.path, lockOptions({}, this.options.log, true, {
      subject: 'the secret store',
      failure: (problem, cause) => this.failed(problem, cause),
    }));
    try {
      const read = await this.read();
      if ('problem' in read) {
        throw new WorkbenchError(
          'SECRET_STORE_FAILED',
          `The secret file ${this.path} ${read.problem}. Nothing was changed and the file is left as it is: repair it, or ` +
            'move it away and store the secrets again.',
        );
      }
      if (apply(read.secrets) === false) return;
      // The rename would replace a file made read-only whatever its mode says: that file says "do not change me".
      const readOnly = await readOnlyReason(this.path);
      if (readOnly !== undefined) {
        throw new WorkbenchError(
          'SECRET_STORE_FAILED',
          `The secret file ${this.path} was not changed: ${readOnly}. Make it writable (chmod u+w) to change its secrets, or leave it as it is.`,
        );
      }
      const sorted = Object.fromEntries([...read.secrets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      // Keys the user added beside "format" and "secrets" (notes, say) are kept as they were, and so is a BOM.
      const extra = read.extra ?? {};
      if (Object.keys(extra).length > 0) this.options.log.warn(`The secret file ${this.path} has keys the workbench does not use (${Object.keys(extra).join(', ')}); they were kept as they are.`);
      try {
        await writeFileAtomic(this.path, `${read.bom ? '\uFEFF' : ''}${JSON.stringify({ format: FORMAT, secrets: sorted, ...extra }, null, 2)}\n`, { mode: 0o600 });
        // write-file-atomic keeps an existing file's mode; a secret file is never readable by others.
        await chmod(this.path, 0o600);
      } catch (error) {
        throw this.failure('could not write it', reasonOf(error), error);
      }
    } finally {
      await release();
    }
  }

  /** Creates the directory 0700; tightens the workbench's own directory when it is looser (POSIX only). */
  private async prepareDirectory(): Promise<void> {
    const dir = dirname(this.path);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      if (this.options.ownDirectory && process.platform !== 'win32' && ((await stat(dir)).mode & 0o077) !== 0) await chmod(dir, 0o700);
    } catch (error) {
      const blocker = await folderBlocker(dir);
      throw this.failure(`could not create its directory ${dir}`, blocker ? `${blocker.reason}; ${blocker.fix}` : reasonOf(error), error);
    }
  }

  private failure(action: string, reason: string, cause: unknown): WorkbenchError {
    return this.failed(`${action}: ${reason}`, cause);
  }

  /** The secret file could not be changed: `problem` says what failed. */
  private failed(problem: string, cause: unknown): WorkbenchError {
    return new WorkbenchError(
      'SECRET_STORE_FAILED',
      `Cannot change the secret file ${this.path}: ${problem}. Nothing was changed. Fix the permissions of ` +
        `${dirname(this.path)}, or point MCP_WORKBENCH_SECRETS_FILE at a writable location.`,
      cause === undefined ? {} : { cause },
    );
  }
}

/**
 * Parses the text of a secret file, checking its shape and every name; never throws. Read as the other files a user
 * may edit are (config/parse-json): a syntax error is placed by line and column, and a key written twice is a problem
 * — JSON would keep only the last value, and the next change would write that alone, losing the other for good.
 * Comments and trailing commas are refused too (with their place): a change rewrites the file and would drop them.
 */
export function parseSecretsFile(text: string): FileRead {
  const body = text.replace(/^\uFEFF/, '');
  let parsed: unknown;
  try {
    const document = parseJsonText(body);
    if (document.duplicateKeys.length > 0) {
      return { problem: `has a key written more than once (${describeDuplicateKeys(document.duplicateKeys).join('; ')})` };
    }
    parsed = document.value;
  } catch (error) {
    return { problem: `is not valid JSON: ${reasonOf(error)}` };
  }
  const strict: ParseError[] = [];
  parseTree(body, strict, { disallowComments: true, allowTrailingComma: false });
  if (strict[0]) {
    const { line, column } = lineAndColumn(body, strict[0].offset);
    return { problem: `has a comment or a trailing comma at line ${line}, column ${column}, which a change would drop; remove it` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: 'is not a JSON object' };
  const { format, secrets, ...extra } = parsed as { format?: unknown; secrets?: unknown } & Record<string, unknown>;
  if (format !== FORMAT) return { problem: `has format ${JSON.stringify(format)}, expected ${FORMAT}` };
  if (typeof secrets !== 'object' || secrets === null || Array.isArray(secrets)) return { problem: 'has no "secrets" object' };
  const found = new Map<string, string>();
  for (const [name, value] of Object.entries(secrets)) {
    if (!isSecretName(name)) return { problem: `holds an invalid secret name ${JSON.stringify(name)}` };
    if (typeof value !== 'string') return { problem: `holds a value of "${name}" that is not a string` };
    found.set(name, value);
  }
  return { secrets: found, ...(Object.keys(extra).length > 0 && { extra }), ...(text.startsWith('\uFEFF') && { bom: true as const }) };
}
