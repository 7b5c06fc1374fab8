import type { Tool } from '@modelcontextprotocol/client';

/**
 * Whether what a tool tells the model is what was approved (README "Pinned tool definitions"). `held`: use_tool
 * refuses it until it is approved (quarantine); otherwise it stays usable and is flagged.
 */
export type TrustVerdict =
  | { state: 'approved' }
  | {
      state: 'new' | 'changed' | 'unverified';
      held: boolean;
      reason: string;
      /** For a server naming `${user:…}`: the user (not `local`) whose own pins it was checked against (`tools approve --user`). */
      user?: string;
    };

export interface TrustPolicy {
  /** `listing`: every tool of the server's listing `tool` is from (whether it is a first sight depends on them all). */
  verdict(toolbox: string, server: string, tool: Tool, listing: readonly Tool[]): TrustVerdict;
}

/** A tool whose definition is not the approved one, as an answer names it. */
export interface UnapprovedTool {
  name: string;
  change: 'new' | 'changed' | 'unverified';
  note: string;
}
