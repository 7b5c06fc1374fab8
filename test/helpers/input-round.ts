import assert from 'node:assert/strict';
import { isInputRequiredResult, type InputRequests } from '@modelcontextprotocol/client';

/** An `input_required` answer of MCP 2026-07-28 with both of its parts: what the client must answer, and the state to echo. */
export interface InputRound {
  inputRequests: InputRequests;
  requestState: string;
}

/**
 * The input round a call with `allowInputRequired: true` was answered with, checked with the SDK's own type guard (a
 * check, not a cast): a complete result, or a round without requests or state, fails the test with the answer shown.
 */
export function inputRound(result: unknown): InputRound {
  assert.ok(isInputRequiredResult(result), `an input_required answer: ${JSON.stringify(result).slice(0, 500)}`);
  const { inputRequests, requestState } = result;
  assert.ok(inputRequests !== undefined && typeof requestState === 'string', `inputRequests and a requestState: ${JSON.stringify(result).slice(0, 500)}`);
  return { inputRequests, requestState };
}
