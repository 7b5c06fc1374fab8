/** What importing another client's MCP servers deals in: the clients known, and what an import yields. */
export type ClientKind = 'claude-desktop' | 'claude-code' | 'cursor' | 'vscode' | 'windsurf' | 'workbench';

export const CLIENT_KINDS: readonly ClientKind[] = ['claude-desktop', 'claude-code', 'cursor', 'vscode', 'windsurf', 'workbench'];

export const CLIENT_LABELS: Record<ClientKind, string> = {
  'claude-desktop': 'Claude Desktop',
  'claude-code': 'Claude Code',
  cursor: 'Cursor',
  vscode: 'VS Code',
  windsurf: 'Windsurf',
  workbench: 'MCP Workbench',
};

/** A variable the imported entries now read from the environment, and why. */
export interface ImportedVariable {
  name: string;
  reason: string;
}

export interface ImportedServers {
  client: ClientKind;
  /** Workbench server entries by (valid, unique) name, in the source's order. */
  servers: [string, Record<string, unknown>][];
  /** One line per rename, conversion, dropped key or skipped server. */
  notes: string[];
  variables: ImportedVariable[];
}

export interface ImportOptions {
  /** Absolute path of the file, for messages and for `${workspaceFolder}`. */
  source: string;
  /** Claude Code `~/.claude.json` only: the project (absolute path) whose local-scope servers to import too. */
  project?: string;
  /** `store`: literal credentials are moved into the secret store afterwards (migrate/store-secrets), not noted. */
  secrets?: 'store';
  /**
   * Paths of this workbench's own executable (its `dist/cli/main.js`): an entry whose command or args name one of
   * them, or mention `mcp-workbench`, runs the workbench itself and is skipped.
   */
  self?: readonly string[];
  /** `workbench` only: the toolbox of the source file to import (default: the target toolbox's name, else its only one). */
  toolbox?: string;
}
