import type { CallToolResult, Client, Progress } from '@modelcontextprotocol/client';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Cancellation } from '../shared/cancellation.js';
import { ANY_OBJECT } from './list-tools.js';

/**
 * A tool whose server requires task augmentation (`execution.taskSupport: "required"`, MCP 2025-11-25 tasks), called
 * through a plain use_tool (README "Task-only tools"): the workbench creates the task downstream, polls `tasks/get`,
 * relays each new status as a progress notification, and returns the result of `tasks/result` unchanged. The wait is
 * the server's `timeoutMs`, reset whenever the status moves, never past the maximum total; a timeout or the client's
 * cancel sends `tasks/cancel`.
 */
export interface TaskCallOptions {
  cancellation?: Cancellation;
  onprogress?: (progress: Progress) => void;
  /** The client's `_meta` for the call (its progress token is the workbench's concern, not the server's). */
  meta?: Record<string, unknown>;
  timeoutMs: number;
  maxTotalMs: number;
  /** `tool "x" on server "s" of toolbox "t"`, for messages. */
  what: string;
}

/** The status of a task, as tasks/get and the creation answer give it. */
interface TaskView {
  taskId: string;
  status: string;
  statusMessage?: string;
  pollInterval?: number;
}

/**
 * The longest a plain call of a `taskSupport: "optional"` tool is expected to take without exceeding a client's
 * patience: the default `timeoutMs` of a server. A server configured with more says its calls run long.
 */
export const OPTIONAL_TASK_AFTER_MS = 120_000;

/**
 * Whether a call goes the task path (README "Task-only tools"): always for `taskSupport: "required"`; for
 * "optional" when the call may outlast the client's patience — the server's `timeoutMs` is above
 * OPTIONAL_TASK_AFTER_MS — and the client gave a progress token, so the task's status, relayed as progress, can keep
 * it waiting. Otherwise a plain call, with no polling.
 */
export function callsAsTask(taskSupport: unknown, timeoutMs: number, withProgress: boolean): boolean {
  if (taskSupport === 'required') return true;
  return taskSupport === 'optional' && withProgress && timeoutMs > OPTIONAL_TASK_AFTER_MS;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
/** Polling bounds, whatever the server suggests. */
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5_000;
/** How long the task may be kept downstream after it ends (the workbench reads its result at once). */
const TASK_TTL_MS = 60_000;

export async function callAsTask(client: Client, tool: string, args: Record<string, unknown> | undefined, options: TaskCallOptions): Promise<CallToolResult> {
  const { cancellation, what } = options;
  const abort = new AbortController();
  const onCancel = (reason: unknown): void => abort.abort(reason);
  cancellation?.onCancel(onCancel);
  try {
    const { progressToken: _token, ...meta } = options.meta ?? {};
    const params = { name: tool, ...(args !== undefined ? { arguments: args } : {}), task: { ttl: TASK_TTL_MS }, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) };
    const created = await creating(client, params, options, abort.signal);
    const task = taskOf(created.task);
    // A server may answer a task-augmented call at once, with the result itself.
    if (!task) return created as CallToolResult;
    const final = await untilTerminal(client, task, options, abort.signal);
    if (final.status === 'cancelled') throw new WorkbenchError('CALL_FAILED', `${what}: the server cancelled its task ${final.taskId}${final.statusMessage ? ` (${final.statusMessage})` : ''}. Call the tool again.`);
    try {
      return (await client.request({ method: 'tasks/result', params: { taskId: task.taskId } } as never, ANY_OBJECT, { timeout: options.timeoutMs, signal: abort.signal })) as CallToolResult;
    } catch (error) {
      // Still running (it asked for input): a cancel or timeout while waiting for its result cancels it on the server.
      if (!TERMINAL.has(final.status)) cancelTask(client, task.taskId);
      throw error;
    }
  } catch (error) {
    throw described(error, options, abort.signal);
  } finally {
    cancellation?.offCancel(onCancel);
  }
}

/**
 * The answer to the call that creates the task. That call is never aborted itself: the server may have made the task
 * already, and its id comes only with the answer. The client's cancel, or no answer within `timeoutMs`, ends the wait
 * at once; a task named in an answer that arrives later is then cancelled on the server (not left running until its
 * ttl). The SDK's own limit on the request is the maximum total, so nothing waits for ever.
 */
function creating(client: Client, params: object, options: TaskCallOptions, signal: AbortSignal): Promise<Record<string, unknown>> {
  const answer = client.request({ method: 'tools/call', params } as never, ANY_OBJECT, { timeout: Math.max(options.maxTotalMs, options.timeoutMs) }) as Promise<Record<string, unknown>>;
  const timedOut = (): never => {
    throw new CreateTimeout();
  };
  return within(answer, options.timeoutMs, signal, timedOut).catch((why: unknown) => {
    answer.then(
      (created) => {
        const task = taskOf(created.task);
        if (task && !TERMINAL.has(task.status)) cancelTask(client, task.taskId);
      },
      () => {},
    );
    throw why;
  });
}

/** Cancels a task on the server; quiet when it cannot (the task then ends with its ttl). */
function cancelTask(client: Client, taskId: string): void {
  void client.request({ method: 'tasks/cancel', params: { taskId } } as never, ANY_OBJECT, { timeout: 10_000 }).catch(() => {});
}

/**
 * Polls tasks/get until the task ends (or asks for input: then tasks/result, which delivers the server's queued
 * requests and waits for the end, is what to wait on). Cancels the task downstream on timeout or abort.
 */
async function untilTerminal(client: Client, first: TaskView, options: TaskCallOptions, signal: AbortSignal): Promise<TaskView> {
  const started = Date.now();
  let deadline = started + Math.min(options.timeoutMs, options.maxTotalMs);
  let task = first;
  let seen = '';
  let step = 0;
  const cancel = (): void => cancelTask(client, first.taskId);
  try {
    for (;;) {
      const said = `${task.status}\0${task.statusMessage ?? ''}`;
      if (said !== seen) {
        seen = said;
        // The status moved: that is progress, which resets the timeout (never past the maximum total).
        deadline = Math.min(Date.now() + options.timeoutMs, started + options.maxTotalMs);
        options.onprogress?.({ progress: ++step, message: task.statusMessage ? `${task.status}: ${task.statusMessage}` : task.status });
      }
      if (TERMINAL.has(task.status) || task.status === 'input_required') return task;
      if (Date.now() >= deadline) throw new TaskTimeout(first.taskId);
      await pause(Math.min(Math.max(task.pollInterval ?? 1_000, MIN_POLL_MS), MAX_POLL_MS, Math.max(deadline - Date.now(), 0)), signal);
      const polled = taskOf(await client.request({ method: 'tasks/get', params: { taskId: first.taskId } } as never, ANY_OBJECT, { timeout: options.timeoutMs, signal }));
      if (!polled) throw new WorkbenchError('CALL_FAILED', `${options.what}: tasks/get for task ${first.taskId} answered without a status. Report this to the server's maintainers.`);
      task = polled;
    }
  } catch (error) {
    cancel();
    throw error;
  }
}

/** The call that creates the task was not answered within the server's `timeoutMs`. */
class CreateTimeout extends Error {
  constructor() {
    super('the task-creating call was not answered in time');
  }
}

class TaskTimeout extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId} timed out`);
  }
}

function taskOf(value: unknown): TaskView | undefined {
  const task = value as Partial<TaskView> | undefined;
  return typeof task === 'object' && task !== null && typeof task.taskId === 'string' && typeof task.status === 'string' ? (task as TaskView) : undefined;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return within(undefined, ms, signal, () => undefined);
}

/**
 * Waits for `work` (when given), the signal's abort or `ms` to pass, whichever comes first, and cleans up its timer
 * and listener once. At the deadline it settles with what `onDeadline` returns or throws.
 */
function within<T>(work: Promise<T> | undefined, ms: number, signal: AbortSignal, onDeadline: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = (settle: () => void): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      settle();
    };
    const onAbort = (): void => done(() => reject(signal.reason));
    const timer = setTimeout(() => done(() => {
      try {
        resolve(onDeadline());
      } catch (error) {
        reject(error);
      }
    }), ms);
    signal.addEventListener('abort', onAbort, { once: true });
    work?.then(
      (value) => done(() => resolve(value)),
      (error: unknown) => done(() => reject(error)),
    );
  });
}

/** What a failed task call rejects with: a WorkbenchError naming the tool, the task and what to do. */
function described(error: unknown, options: TaskCallOptions, signal: AbortSignal): WorkbenchError {
  if (error instanceof WorkbenchError) return error;
  if (signal.aborted) return new WorkbenchError('CALL_CANCELLED', `${options.what}: cancelled by the client; its task was cancelled on the server too.`, { cause: error });
  if (error instanceof CreateTimeout) {
    return new WorkbenchError(
      'CALL_TIMEOUT',
      `${options.what}: the server did not answer the call that creates its task within ${options.timeoutMs} ms; a task it made meanwhile is cancelled once its answer comes. Raise "timeoutMs" on the server in the workbench config if it needs longer.`,
      { cause: error },
    );
  }
  if (error instanceof TaskTimeout) {
    return new WorkbenchError(
      'CALL_TIMEOUT',
      `${options.what}: its task ${error.taskId} made no progress for ${options.timeoutMs} ms, so the workbench cancelled it. Raise "timeoutMs" on the server in the workbench config if it needs longer.`,
      { cause: error },
    );
  }
  return new WorkbenchError('CALL_FAILED', `${options.what}: the task-augmented call failed: ${errorMessage(error)}`, { cause: error });
}
