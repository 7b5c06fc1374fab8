import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Answer, BudgetedAnswer } from '../catalog/catalog-index.js';
import type { WorkbenchError } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import { errorResult } from './tool-entry.js';

/**
 * While the tool state file cannot be trusted (it does not parse, or cannot be read), the workbench fails closed
 * (README "Enabled and disabled tools"): no call is forwarded, and what is shown is the last good state read in
 * this run, if any. These are the words for that; `problem.message` names the file, line:column and the fix.
 */

/** The `use_tool` refusal while the state file is broken. */
export function stateRefusal(toolName: string, problem: WorkbenchError): CallToolResult {
  return errorResult(
    `Cannot call ${quoteClientText(toolName)}: no tool is called while the tool state file cannot be trusted, so nothing ` +
      `it disables can run. ${problem.message} Calls resume as soon as it is good again (no restart needed).`,
    problem.code,
    { hint: 'Fix the tool state file; calls resume as soon as it is good again (no restart needed).' },
  );
}

/** The one-line note on answers made from the last good state while the file is broken. */
export function stateWarning(problem: WorkbenchError): string {
  return `The tool state file is broken, so use_tool refuses every call until it is fixed; the tools shown are as of its last good content. ${problem.message}`;
}

/** An open_toolbox answer with the note added (`state_warning`). */
export function withStateWarning(answer: BudgetedAnswer, problem: WorkbenchError): BudgetedAnswer {
  const result: Answer & { state_warning: string } = { ...answer.result, state_warning: stateWarning(problem) };
  return { result, text: JSON.stringify(result) };
}
