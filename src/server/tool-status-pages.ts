import type { ToolStatus, ToolStatusReport } from '../core/tool-entry.js';

/**
 * `list_all_tools` under a bound, like every answer the model reads (README "Management tools"): the whole report
 * when its text fits {@link MAX_REPORT_CHARS}; else the tools without their descriptions (name, status, source), one
 * page at a time from `cursor`, with `next_cursor` and a hint naming the next call.
 */
export const MAX_REPORT_CHARS = 40_000;

export interface ToolStatusPage extends Partial<ToolStatusReport> {
  tools: (ToolStatus | Omit<ToolStatus, 'description' | 'override'>)[];
  /** `compact` when descriptions were left out to fit. */
  detail?: 'compact';
  next_cursor?: string;
  hint?: string;
}

/** The page of `report` that starts at `cursor` (a tool offset, as a previous `next_cursor` gave it). */
export function toolStatusPage<R extends ToolStatusReport>(report: R, cursor: number | undefined, toolbox: string | undefined): R | (R & ToolStatusPage) {
  if (cursor === undefined && JSON.stringify(report).length <= MAX_REPORT_CHARS) return report;
  const start = Math.min(cursor ?? 0, report.tools.length);
  const base = { ...report, tools: [], detail: 'compact' as const };
  let used = JSON.stringify(base).length + 400;
  const tools: Omit<ToolStatus, 'description' | 'override'>[] = [];
  for (const status of report.tools.slice(start)) {
    const { description: _description, override: _override, ...compact } = status;
    used += JSON.stringify(compact).length + 1;
    if (used > MAX_REPORT_CHARS && tools.length > 0) break;
    tools.push(compact);
  }
  const next = start + tools.length;
  const more = next < report.tools.length;
  const again = JSON.stringify({ ...(toolbox !== undefined && { toolbox }), cursor: String(next) });
  return {
    ...base,
    tools,
    ...(more && { next_cursor: String(next) }),
    hint:
      `Tools ${start + 1}–${next} of ${report.tools.length}, without descriptions (open_toolbox shows those).` +
      (more ? ` Call list_all_tools ${again} for the next page${toolbox === undefined ? ', or pass one toolbox' : ''}.` : ''),
  };
}
