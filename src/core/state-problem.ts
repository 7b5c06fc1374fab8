import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Answer, BudgetedAnswer } from '../catalog/catalog-index.js';
import { WorkbenchError } from '../errors.js';
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
  return withNote(answer, 'state_warning', stateWarning(problem));
}

/**
 * The one-line note on answers while the config's last edit could not be applied (README "Live reload"): what is
 * served is the config from before that edit, so a toolbox or server it adds is not there yet.
 */
export function configWarning(problem: WorkbenchError): string {
  return `The config's last edit is not applied, so the workbench still serves the config from before it (a toolbox or server that edit adds is not here yet); it is applied as soon as the file is valid again, with no restart. ${problem.toDisplayString()}`;
}

/** An open_toolbox answer with the note added (`config_warning`). */
export function withConfigWarning(answer: BudgetedAnswer, problem: WorkbenchError): BudgetedAnswer {
  return withNote(answer, 'config_warning', configWarning(problem));
}

/** An unknown-toolbox error while the config's last edit is not applied: it may be the toolbox that edit adds. */
export function withConfigHint(error: WorkbenchError, problem: WorkbenchError): WorkbenchError {
  return new WorkbenchError(error.code, `${error.message} ${configWarning(problem)}`, { cause: error, hint: 'Fix the config file; its edit is applied as soon as it is valid.' });
}

function withNote(answer: BudgetedAnswer, key: 'state_warning' | 'config_warning', note: string): BudgetedAnswer {
  const result: Answer & Partial<Record<typeof key, string>> = { ...answer.result, [key]: note };
  return { ...answer, result, text: JSON.stringify(result) };
}
