import { FIX_BY_A_PERSON } from '../config/server-problems.js';

/**
 * What a server that cannot start tells its reader to do next, after what was wrong: the model over MCP
 * ({@link MODEL_START_STEPS}, the default: its other servers meanwhile, and what to tell the user), or a person at the
 * CLI, told the `doctor` command that runs as printed, or a person running `doctor`, told what to fix and the same
 * `doctor` to run again (cliSteps and doctorSteps, src/cli/next-command.ts). Part of core's NextSteps; a runtime
 * gives its slots one (SlotOptions.startSteps), so each failed start is described once, in its reader's words.
 */
export interface StartSteps {
  /** A server of `toolbox` that did not finish its handshake in time: `npx` whether it starts through npx, `check` what doctor checks of it. */
  startTimedOut(toolbox: string, npx: boolean, check: string): string;
  /** A server of `toolbox` that cannot start until a person does `todo` (a phrase: its command or cwd is missing). */
  needsAPerson(toolbox: string, todo: string): string;
  /** A server of `toolbox` whose process ended before its handshake: its command, args or env need fixing. */
  startFailed(toolbox: string): string;
  /** A server of `toolbox` whose config entry cannot start as written, after its fixes (`To fix: …. ` + this). */
  fixConfig(toolbox: string): string;
  /** A remote server of `toolbox` that could not be reached, or answered no status a hint of its own covers: check it is up and its "url". */
  checkRemote(toolbox: string): string;
}

/** The model's next steps about a server that cannot start: its toolbox's other servers, and what to tell the user. */
export const MODEL_START_STEPS: StartSteps = {
  startTimedOut: (_toolbox, npx, check) => {
    const meanwhile = "Use the toolbox's other servers meanwhile; the next call starts it again";
    const person = 'If it times out again, tell the user to run `mcp-workbench doctor`';
    if (npx) {
      return `${meanwhile} (its first start downloads the package with npx, which can take longer). ${person}; running its command once in a terminal fills npm's cache (or its "connectTimeoutMs" can be raised).`;
    }
    return `${meanwhile} (it may only be slow to start). ${person}, which checks ${check} (or its "connectTimeoutMs" can be raised).`;
  },
  needsAPerson: (_toolbox, todo) => `A person must ${todo}; \`mcp-workbench doctor\` shows how, and it is tried again on next use. Use the other servers meanwhile.`,
  startFailed: () => 'Fix its command, args or env in the config (`mcp-workbench doctor` checks every server); it is tried again on next use.',
  fixConfig: () => FIX_BY_A_PERSON,
  checkRemote: () => 'Check that the server is running and its "url" is right (`mcp-workbench doctor` checks it); the next call tries again; use other servers\' tools meanwhile.',
};
