import { createHash } from 'node:crypto';
import type { CallToolResult, InputRequests, LoggingLevel, ServerContext, createRequestStateCodec } from '@modelcontextprotocol/server';
import { inputRequired } from '@modelcontextprotocol/server';
import { errorResult } from '../core/tool-entry.js';
import { ROUND_BUSY_MESSAGE, ROUNDS_FULL_MESSAGE, type InputRounds, type Notify, type RoundOutcome } from './input-rounds.js';
import { USE_TOOL, USE_TOOL_USAGE } from './meta-tools.js';
import { abandonAnswer, type ModernAnswer, type ModernUseToolCall, type UseToolCall } from './tool-call-pipeline.js';
import { refusal, useToolProblem } from './tool-params.js';

/** What a `requestState` we hand out carries: an input round held here, or a modern server's own state. */
/**
 * What a requestState carries: a round held here (with the call it continues: its tool, and a digest of its
 * arguments), or a modern server's own round passed through (with its tool).
 */
export type RequestStatePayload = { round: string; target?: string; args?: string } | { pass: { target: string; state?: string } };

type StateCodec = ReturnType<typeof createRequestStateCodec<RequestStatePayload>>;

export interface ModernUseToolDeps {
  rounds: InputRounds;
  /** Who the surface serves: a round is only ever resumed by the same owner. */
  owner: string;
  /** Signs and verifies `requestState` (bound to the owner). */
  codec: StateCodec;
  /** use_tool with parameters already checked: the workbench does the rest. */
  checkedUseTool(args: Record<string, unknown>, call: UseToolCall): Promise<CallToolResult>;
}

/**
 * use_tool for a client of MCP 2026-07-28. Two kinds of input round, both ending the request with an input-required
 * answer whose signed `requestState` says how to continue:
 * - a modern server's own input requests are passed through as they came, and its requestState travels inside ours:
 *   nothing is held here, so the retry may reach any workbench process that shares the signing key;
 * - a legacy server's requests during a live call are held in an {@link InputRounds} round of this process.
 */
export function createModernUseTool(deps: ModernUseToolDeps): (args: Record<string, unknown>, call: ModernUseToolCall) => Promise<ModernAnswer> {
  // Not async: a call that never asks for input resolves one step after its round does.
  return (args, call) => {
    const problem = useToolProblem(args);
    if (problem !== undefined) return Promise.resolve({ complete: refusal(USE_TOOL_USAGE, problem) });
    const state = call.state as RequestStatePayload | undefined;
    const outcome = state !== undefined && 'round' in state ? resumeRound(deps, state, args, call) : startRound(deps, args, call, state);
    if ('complete' in outcome) return Promise.resolve(outcome);
    return outcome.running.then((result) => framed(deps, result, args));
  };
}

/** Which tool a call reaches, as a pass-through round's requestState names it. */
function callTarget(args: Record<string, unknown>): string {
  return `${String(args.toolbox_name)}\0${String(args.tool_name)}`;
}

/** A digest of a call's arguments: a retry must repeat the request that asked for input (MRTR), arguments included. */
function argumentsDigest(args: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(args.arguments ?? {})).digest('base64url').slice(0, 22);
}

/** The downstream side of a first call: a modern server's input-required answer comes back as it is. */
const FIRST_CALL: NonNullable<UseToolCall['pass']> = Object.freeze({ passInputRequired: true });

/** The retry of a round held here: its answers go to the call waiting for them. */
function resumeRound(
  deps: ModernUseToolDeps,
  state: { round: string; target?: string; args?: string },
  args: Record<string, unknown>,
  call: ModernUseToolCall,
): { running: Promise<RoundOutcome> } | { complete: CallToolResult } {
  // The answers would go to the call that asked, whose result would then be told as this call's: refused instead.
  if (state.target !== undefined && state.target !== callTarget(args)) {
    return { complete: refusal(USE_TOOL_USAGE, `${USE_TOOL}: this requestState continues a call of another tool; retry with the toolbox_name and tool_name of the call that asked for input`) };
  }
  if (state.args !== undefined && state.args !== argumentsDigest(args)) {
    return { complete: refusal(USE_TOOL_USAGE, `${USE_TOOL}: this requestState continues a call with other arguments; retry with the same arguments as the call that asked for input`) };
  }
  const resumed = deps.rounds.resume(deps.owner, state.round, call.responses ?? {}, call.cancellation, call.notify as Notify);
  if (resumed) return { running: resumed };
  return {
    complete: errorResult(
      "This call's input round is not held by this workbench: it ended (answered, cancelled, or no answer within 10 minutes), or it was " +
        'started by another workbench process (README "Protocol eras": a call that asks for input returns to the process that started it). ' +
        'Call use_tool again without requestState.',
      'INPUT_ROUND_UNKNOWN',
    ),
  };
}

/** A new call, or the retry of a modern server's own round (its responses and state passed on to it). */
function startRound(
  deps: ModernUseToolDeps,
  args: Record<string, unknown>,
  call: ModernUseToolCall,
  state: { pass: { target: string; state?: string } } | undefined,
): { running: Promise<RoundOutcome> } | { complete: CallToolResult } {
  if (state !== undefined && state.pass.target !== callTarget(args)) {
    return {
      complete: refusal(USE_TOOL_USAGE, `${USE_TOOL}: this requestState continues a call of another tool; retry with the toolbox_name and tool_name of the call that asked for input`),
    };
  }
  const pass: NonNullable<UseToolCall['pass']> =
    state === undefined ? FIRST_CALL : { passInputRequired: true, inputResponses: call.responses ?? {}, requestState: state.pass.state };
  const { meta } = call;
  const running = deps.rounds.start(
    deps.owner,
    (ask, cancellation, roundNotify) =>
      deps.checkedUseTool(args, {
        cancellation,
        progressToken: meta?.progressToken as UseToolCall['progressToken'],
        meta,
        notify: roundNotify as UseToolCall['notify'],
        request: (request, askSignal) => ask(request, askSignal),
        pass,
        ...(call.logLevel !== undefined && { logLevel: call.logLevel, log: callLog(call.logLevel, roundNotify as Notify) }),
      }),
    call.cancellation,
    call.notify as Notify,
  );
  return { running };
}

/** MCP's log levels, least severe first. */
const LOG_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** A call's log messages at or above the level it asked for, on its own stream (the latest request of its rounds). */
function callLog(level: LoggingLevel, notify: Notify): NonNullable<UseToolCall['log']> {
  const threshold = LOG_LEVELS.indexOf(level);
  return (params) => {
    if (LOG_LEVELS.indexOf(params.level) >= threshold) notify({ method: 'notifications/message', params });
  };
}

/** How a round ended, as the answer: complete, or input-required with a requestState signed with the request's context. */
function framed(deps: ModernUseToolDeps, result: RoundOutcome, args: Record<string, unknown>): ModernAnswer {
  const codec = deps.codec;
  if (result.kind === 'full') return { complete: errorResult(`${ROUNDS_FULL_MESSAGE}.`, 'INPUT_ROUNDS_FULL') };
  if (result.kind === 'busy') return { complete: errorResult(`${ROUND_BUSY_MESSAGE}.`, 'INPUT_ROUND_BUSY') };
  if (result.kind === 'input') {
    const round = result.round;
    return {
      // Held here for the client's retry: let go at once if the answer never reaches the client.
      abandon: (reason) => deps.rounds.abandon(deps.owner, round, reason),
      finish: async (ctx) =>
        inputRequired({
          inputRequests: result.inputRequests as unknown as InputRequests,
          requestState: await codec.mint({ round, target: callTarget(args), args: argumentsDigest(args) }, ctx),
        }) as unknown as CallToolResult,
    };
  }
  const answer = result.result as CallToolResult & { resultType?: string; inputRequests?: InputRequests; requestState?: unknown };
  if (answer.resultType !== 'input_required') return { complete: answer };
  return {
    finish: async (ctx) =>
      inputRequired({
        ...(answer.inputRequests ? { inputRequests: answer.inputRequests } : {}),
        requestState: await codec.mint({ pass: { target: callTarget(args), ...(typeof answer.requestState === 'string' ? { state: answer.requestState } : {}) } }, ctx),
      }) as unknown as CallToolResult,
  };
}

/**
 * The result a modern answer stands for, in the context of the request it answers. An answer holding an input round
 * for the client's retry lets the round go when the request is cancelled before the answer is written (the client
 * went away, or cancelled while the requestState was being signed): the SDK then writes nothing, and the client would
 * never come back for the round.
 */
export function finishModernAnswer(answer: ModernAnswer, ctx: ServerContext): Promise<CallToolResult> | CallToolResult {
  if ('complete' in answer) return answer.complete;
  if (answer.abandon === undefined) return answer.finish(ctx);
  const signal = ctx.mcpReq.signal;
  const onAbort = (): void => abandonAnswer(answer);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return answer.finish(ctx).finally(() => signal.removeEventListener('abort', onAbort));
}
