import assert from 'node:assert/strict';
import type { Client, JSONRPCMessage } from '@modelcontextprotocol/client';
import { fixtureEvents, waitFor } from './workbench-process.js';

/** What a client hears from a fixture server's `chatter` tool (test/fixtures/fixture-server.mjs), which goes on talking after its call ended. */

export interface Heard {
  /** Every message the client's transport delivered, in order. */
  messages: JSONRPCMessage[];
}

/** Records every message `client`'s transport delivers (before the client handles it). */
export function listen(client: Client): Heard {
  const heard: Heard = { messages: [] };
  const transport = client.transport!;
  const inner = transport.onmessage;
  transport.onmessage = (message, extra) => {
    heard.messages.push(message);
    inner?.(message, extra);
  };
  return heard;
}

export function useTool(tool: string, args: Record<string, unknown>, meta?: Record<string, unknown>): { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> } {
  return { name: 'use_tool', arguments: { toolbox_name: 't', tool_name: `t__fx__${tool}`, arguments: args }, ...(meta && { _meta: meta }) };
}

/** The `_meta` key by which a MCP 2026-07-28 request asks for log messages at a level. */
export const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';

/** Starts the `chatter` tool with `args` (logging at info), waits for two ticks of progress, and cancels it: the call rejects. */
export async function chatterCancelled(client: Client, args: Record<string, unknown>): Promise<void> {
  const abort = new AbortController();
  let ticks = 0;
  const call = client.callTool(useTool('chatter', args, { [LOG_LEVEL_KEY]: 'info' }), { signal: abort.signal, timeout: 120_000, onprogress: () => void ticks++ });
  const settled = call.then(
    () => 'answered',
    () => 'rejected',
  );
  await waitFor(() => ticks >= 2, { timeoutMs: 30_000, what: 'progress of the call' });
  abort.abort('the user cancelled it');
  assert.equal(await settled, 'rejected');
}

const method = (m: JSONRPCMessage): string | undefined => (m as { method?: string }).method;
export const paramsOf = (m: JSONRPCMessage): Record<string, unknown> => ((m as { params?: Record<string, unknown> }).params ?? {});

/** Progress and log messages among `messages`. */
export function chatterOf(messages: JSONRPCMessage[]): { progress: JSONRPCMessage[]; logs: JSONRPCMessage[] } {
  return {
    progress: messages.filter((m) => method(m) === 'notifications/progress'),
    logs: messages.filter((m) => method(m) === 'notifications/message' && String(paramsOf(m).data).startsWith('chatter')),
  };
}

/** Waits until the fixture logged `count` ticks sent after the cancel, then until its chatter is over. */
export async function lateTicks(log: string, count: number): Promise<void> {
  await waitFor(async () => (await fixtureEvents(log)).filter((e) => e.event === 'chatter' && e.late === true).length >= count, { timeoutMs: 30_000, what: `${count} late ticks` });
  await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'chatter_done'), { timeoutMs: 30_000, what: 'the chatter to end' });
}

/** Stderr lines that say something failed inside the workbench. */
export function failuresIn(stderr: string): string[] {
  return stderr.split('\n').filter((line) => /unhandled|uncaught|TypeError|ReferenceError|\n\s+at /i.test(line));
}


/**
 * The progress notifications among `messages` that the fixture sent after it was told the call was cancelled: the
 * workbench had handled the cancel before those reached it. (A tick sent just before may be on its way as the client
 * cancels, and may arrive: that one is not late.)
 */
export async function lateProgress(messages: JSONRPCMessage[], log: string): Promise<JSONRPCMessage[]> {
  const late = new Set((await fixtureEvents(log)).filter((e) => e.event === 'chatter' && e.late === true).map((e) => `tick ${String(e.n)}`));
  return chatterOf(messages).progress.filter((m) => late.has(String(paramsOf(m).message)));
}

/** The chatter log messages among `messages` that the fixture sent after it was told the call was cancelled (see {@link lateProgress}). */
export async function lateLogs(messages: JSONRPCMessage[], log: string): Promise<JSONRPCMessage[]> {
  const late = new Set((await fixtureEvents(log)).filter((e) => e.event === 'chatter' && e.late === true).map((e) => `chatter ${String(e.n)}`));
  return chatterOf(messages).logs.filter((m) => late.has(String(paramsOf(m).data)));
}
