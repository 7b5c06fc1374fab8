/**
 * One client's life in the HTTP soak (bench/lib/soak-http.ts): connect with a token, an era and a capability set,
 * open and search, call tools on per-user and shared servers (answering the servers' sampling and elicitation
 * questions, as requests or as MCP 2026-07-28 input rounds), cancel a slow call, subscribe to a resource, then end
 * with a DELETE or walk away to the idle timeout.
 */
import { Client, StreamableHTTPClientTransport, isInputRequiredResult, type ClientCapabilities } from '@modelcontextprotocol/client';

export const CAPSETS: ClientCapabilities[] = [
  {},
  { sampling: {} },
  { elicitation: { form: {} } },
  { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } },
];

export interface SessionPlan {
  n: number;
  url: string;
  token: string;
  era: 'legacy' | 'modern';
  caps: ClientCapabilities;
  abandon: boolean;
  cancelSlow: boolean;
  /** The per-session server this session uses besides fx's. */
  extra: 'feat' | 'slow' | 'mem' | 'ev' | 'mod' | 'none';
}

/** Failures the soak saw, by their first words: a session's problems are counted, never fatal to the soak. */
export type Failures = Map<string, number>;

function note(failures: Failures, what: string, error: unknown): void {
  const text = `${what}: ${error instanceof Error ? error.message : JSON.stringify(error)}`.replace(/\s+/g, ' ').slice(0, 160);
  failures.set(text, (failures.get(text) ?? 0) + 1);
}

function answerFor(method: string): Record<string, unknown> {
  if (method === 'sampling/createMessage') return { role: 'assistant', content: { type: 'text', text: 'soak sample' }, model: 'soak' };
  if (method === 'elicitation/create') return { action: 'accept', content: { name: 'Ada', answer: 'yes' } };
  return { roots: [{ uri: 'file:///tmp/soak', name: 'soak' }] };
}

function newClient(plan: SessionPlan): Client {
  const client = new Client(
    { name: `soak-${plan.era}`, version: '1.0.0' },
    { capabilities: plan.caps, versionNegotiation: { mode: plan.era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  if (plan.caps.sampling) client.setRequestHandler('sampling/createMessage', () => answerFor('sampling/createMessage') as never);
  if (plan.caps.elicitation) client.setRequestHandler('elicitation/create', () => answerFor('elicitation/create') as never);
  if (plan.caps.roots) client.setRequestHandler('roots/list', () => answerFor('roots/list') as never);
  return client;
}

/** A `use_tool` call; a modern client's input rounds are answered until the call completes (at most 4 rounds). */
async function useTool(client: Client, toolbox: string, tool: string, args: Record<string, unknown>, options: Record<string, unknown> = {}): Promise<unknown> {
  let params: Record<string, unknown> = { name: 'use_tool', arguments: { toolbox_name: toolbox, tool_name: tool, arguments: args } };
  for (let round = 0; round < 4; round++) {
    const result = await client.callTool(params as never, { allowInputRequired: true, timeout: 60_000, ...options } as never);
    if (!isInputRequiredResult(result)) return result;
    const responses: Record<string, unknown> = {};
    for (const [key, request] of Object.entries(result.inputRequests ?? {})) responses[key] = answerFor((request as { method: string }).method);
    params = { ...params, inputResponses: responses, requestState: result.requestState };
  }
  throw new Error(`${tool}: still asking after 4 input rounds`);
}

async function step(failures: Failures, what: string, run: () => Promise<unknown>): Promise<void> {
  try {
    const result = (await run()) as { isError?: boolean; content?: Array<{ text?: string }> } | undefined;
    if (result?.isError) note(failures, `${what} isError`, result.content?.[0]?.text ?? '');
  } catch (error) {
    note(failures, what, error);
  }
}

async function slowCall(client: Client, plan: SessionPlan, failures: Failures): Promise<void> {
  const controller = new AbortController();
  let progress = 0;
  const call = useTool(client, 'slow', 'slow__s__slow', { ms: 400, steps: 4 }, { signal: controller.signal, onprogress: () => progress++ });
  if (plan.cancelSlow) setTimeout(() => controller.abort('soak cancel'), 150);
  await step(failures, plan.cancelSlow ? 'slow (cancelled)' : 'slow', async () => {
    try {
      return await call;
    } catch (error) {
      if (plan.cancelSlow && controller.signal.aborted) return undefined;
      throw error;
    }
  });
}

async function workload(client: Client, plan: SessionPlan, failures: Failures): Promise<void> {
  if (plan.n % 4 === 0) await step(failures, 'open fx', () => client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'fx' } }));
  if (plan.n % 4 === 1) await step(failures, 'search', () => client.callTool({ name: 'open_toolbox', arguments: { query: 'echo some text back' } }));
  await step(failures, 'shared echo', () => useTool(client, 'fx', 'fx__shared__echo', { text: `s${plan.n}` }));
  if (plan.n % 2 === 0) await step(failures, 'user echo', () => useTool(client, 'fx', 'fx__user__echo', { text: `u${plan.n}` }));
  if (plan.extra === 'feat') {
    if (plan.caps.sampling) await step(failures, 'ask sampling', () => useTool(client, 'feat', 'feat__f__ask', { kind: 'sampling' }));
    if (plan.caps.elicitation) await step(failures, 'ask elicitation', () => useTool(client, 'feat', 'feat__f__ask', { kind: 'elicitation' }));
    if (plan.era === 'legacy') await step(failures, 'subscribe', () => subscribeOne(client));
    await step(failures, 'progress log', () => useTool(client, 'feat', 'feat__f__log', { message: 'soak' }));
  }
  if (plan.extra === 'slow') await slowCall(client, plan, failures);
  if (plan.extra === 'mem') await step(failures, 'memory', () => useTool(client, 'mem', 'mem__m__create_entities', { entities: [{ name: `e${plan.n}`, entityType: 'soak', observations: ['x'] }] }));
  if (plan.extra === 'ev') await step(failures, 'everything echo', () => useTool(client, 'ev', 'ev__every__echo', { message: 'hi' }));
  if (plan.extra === 'mod') {
    await step(failures, 'modern echo', () => useTool(client, 'mod', 'mod__m__echo', { text: 'hi' }));
    if (plan.caps.elicitation) await step(failures, 'modern ask', () => useTool(client, 'mod', 'mod__m__ask', { question: 'q?' }));
    if (plan.caps.sampling) await step(failures, 'modern sample', () => useTool(client, 'mod', 'mod__m__sample', { prompt: 'p' }));
  }
}

async function subscribeOne(client: Client): Promise<unknown> {
  const { resources } = await client.listResources();
  const first = resources.find((r) => r.uri.includes('/own'));
  if (first) await client.subscribeResource({ uri: first.uri });
  return undefined;
}

/** Runs one session to its end; every problem is counted in `failures`. */
export async function runSession(plan: SessionPlan, failures: Failures): Promise<void> {
  const client = newClient(plan);
  const transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: { Authorization: `Bearer ${plan.token}` } } });
  try {
    await client.connect(transport, plan.era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
  } catch (error) {
    note(failures, 'connect', error);
    await client.close().catch(() => {});
    return;
  }
  await workload(client, plan, failures);
  if (!plan.abandon && plan.era === 'legacy') await transport.terminateSession().catch((error: unknown) => note(failures, 'DELETE', error));
  await client.close().catch((error: unknown) => note(failures, 'close', error));
}
