import { homedir } from 'node:os';
import type { SecretSource } from '../config/secret-source.js';
import { errorMessage } from '../errors.js';
import { createLogger, parseLogLevel, type Logger } from '../log.js';
import { type SecretStore, openSecretStore } from '../secrets/secret-store.js';

/**
 * What every command needs from the process, read once here (the only place besides main.ts that touches
 * process.env): the environment, a stderr logger, the working directory, and the exit-code conventions.
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export interface CliContext {
  env: Record<string, string | undefined>;
  cwd: string;
  log: Logger;
  /** True when stderr is a terminal (progress lines are shown only then). */
  stderrIsTTY: boolean;
  /** Prints a result to stdout (commands other than serve). */
  print(text: string): void;
  /** Logs the error on stderr and sets exit code 1. */
  fail(error: unknown): void;
  /** Opens the secret store (README "Secrets"). @throws WorkbenchError SECRET_STORE_FAILED */
  secretStore(): Promise<SecretStore>;
  /**
   * A fresh snapshot of the secret store for `${secret:NAME}`; never throws: a store that cannot be opened becomes
   * the `problem` of every server that uses a secret, never a failure of the workbench.
   */
  secretSource(): Promise<SecretSource>;
}

export function createCliContext(): CliContext {
  const env = process.env as Record<string, string | undefined>;
  const log = createLogger({ level: parseLogLevel(env.WORKBENCH_LOG_LEVEL) ?? 'info' });
  const secretStore = (): Promise<SecretStore> =>
    openSecretStore({ env, homedir: env.HOME || homedir(), cwd: process.cwd(), platform: process.platform, log });
  return {
    secretStore,
    secretSource: async () => {
      try {
        return await (await secretStore()).source();
      } catch (error) {
        return { where: 'the secret store', get: () => undefined, problem: errorMessage(error) };
      }
    },
    env,
    cwd: process.cwd(),
    log,
    stderrIsTTY: process.stderr.isTTY === true,
    print: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    fail: (error) => {
      log.error(errorMessage(error));
      process.exitCode = EXIT_FAILURE;
    },
  };
}

/** `a, b,,c ` → ['a', 'b', 'c']; for options that may also be repeated. */
export function splitList(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter((s) => s.length > 0)];
}
