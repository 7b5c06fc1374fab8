import type { ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { WorkbenchObserver } from '../core/call-events.js';
import { REFUSAL_REASONS, type RefusalReason } from './http-refusals.js';

/**
 * Prometheus metrics of a `serve --http --metrics` workbench (README "Serving over HTTP"), at `/metrics` behind the
 * same token as `/mcp`: calls and toolbox opens by toolbox, server and outcome with their latency, open sessions,
 * connected servers, requests refused by reason, and the process's own figures. Labels are names from the config and a fixed set of outcomes —
 * never a tool name a client sent, so the series stay bounded. Fed by the workbench's call observer, which costs the
 * call path nothing when metrics are off.
 */
export interface HttpMetrics {
  /** Told of every call and open (chain it with the other observers). */
  observer: WorkbenchObserver;
  /** Counts a request of an MCP 2026-07-28 client by how it was answered (see http-modern-pipeline). */
  modernRequest(path: 'pipeline' | 'handed_over' | 'sdk'): void;
  /** Counts a refused request (see http-refusals). */
  refused(reason: RefusalReason): void;
  /** Answers a scrape. */
  serve(res: ServerResponse): Promise<void>;
}

export interface MetricSources {
  /** Client sessions open now (handshake-era sessions and modern clients' surfaces). */
  sessions(): number;
  /** Downstream servers connected now, across every session. */
  servers(): number;
  /** Restarts of downstream servers since start (see Workbench.restartCount). */
  restarts(): number;
  /** Whether the config (now) has this toolbox or toolset, and this server in it: other names are not labels. */
  configured(toolbox: string, server?: string): boolean;
}

/** Seconds: from a cached catalog answer to a slow tool. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export function createHttpMetrics(sources: MetricSources): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mcp_workbench_' });
  const labelNames = ['kind', 'toolbox', 'server', 'outcome'] as const;
  const calls = new Counter({ name: 'mcp_workbench_calls_total', help: 'use_tool calls (kind=call) and open_toolbox answers (kind=open), by outcome', labelNames, registers: [registry] });
  const latency = new Histogram({
    name: 'mcp_workbench_call_duration_seconds',
    help: 'time to answer a use_tool call or an open_toolbox, by outcome',
    labelNames,
    buckets: BUCKETS,
    registers: [registry],
  });
  const modern = new Counter({
    name: 'mcp_workbench_modern_http_requests_total',
    help: 'requests of MCP 2026-07-28 clients over HTTP: answered by the tool-call pipeline (path=pipeline), worked out by it and framed by the SDK (handed_over), or by the SDK (sdk)',
    labelNames: ['path'] as const,
    registers: [registry],
  });
  const refused = new Counter({
    name: 'mcp_workbench_http_refused_total',
    help: 'HTTP requests refused before any server answered them, by reason: token_missing, token_invalid (401), host, origin (403), too_large (413), session_limit (503), unknown_session, not_found (404), method_not_allowed (405), bad_request (400)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  // Every reason is a series from the start: a rate or an alert over it needs no first refusal.
  for (const reason of REFUSAL_REASONS) refused.inc({ reason }, 0);
  registerLiveFigures(registry, sources);
  return {
    observer: (event) => {
      // A name a client made up (an unknown toolbox, a server the toolbox does not have) is one label, not a new series.
      const toolbox = event.toolbox === '*' || sources.configured(event.toolbox) ? event.toolbox : '(unknown)';
      const server = event.server !== undefined && toolbox !== '(unknown)' && sources.configured(event.toolbox, event.server) ? event.server : '';
      const labels = { kind: event.kind, toolbox, server, outcome: event.outcome };
      calls.inc(labels);
      latency.observe(labels, event.duration_ms / 1000);
    },
    modernRequest: (path) => modern.inc({ path }),
    refused: (reason) => refused.inc({ reason }),
    async serve(res) {
      const body = await registry.metrics();
      res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
      res.end(body);
    },
  };
}

/** Figures read when scraped: clients served, servers connected, restarts. */
function registerLiveFigures(registry: Registry, sources: MetricSources): void {
  new Gauge({
    name: 'mcp_workbench_sessions',
    help: 'client sessions open now (handshake-era HTTP sessions and modern clients)',
    registers: [registry],
    collect() {
      this.set(sources.sessions());
    },
  });
  new Gauge({
    name: 'mcp_workbench_servers_connected',
    help: 'downstream server connections open now, across every session',
    registers: [registry],
    collect() {
      this.set(sources.servers());
    },
  });
  new Counter({
    name: 'mcp_workbench_server_restarts_total',
    help: 'downstream servers connected again after they had been connected (crashed or lost), since start',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sources.restarts());
    },
  });
}
