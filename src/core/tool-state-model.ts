import { sessionToolsetFilter } from '../catalog/toolsets.js';
import { createVisibilityPolicy, type ToolState, type VisibilityPolicy } from '../catalog/visibility.js';
import type { WorkbenchConfig } from '../config/types.js';
import type { WorkbenchError } from '../errors.js';

/**
 * Which tools are enabled, from every source (README "Enabled and disabled tools"): the config in effect,
 * `--disabled-tools`, `--toolset`, and the tool state file — including whether that file can be trusted now. The
 * visibility policy is derived from them once per change.
 */
export class ToolStateModel {
  private state: ToolState | undefined;
  /** Set while the state file cannot be trusted: use_tool refuses every call. */
  private problem: WorkbenchError | undefined;
  /** Whether `state` came from a good read in this run (false while the file has been broken since start). */
  private known: boolean;
  private current: VisibilityPolicy;

  constructor(
    config: WorkbenchConfig,
    private readonly cliDisabled: readonly string[],
    readonly sessionToolsets: readonly string[] | undefined,
    state: ToolState | undefined,
    problem: WorkbenchError | undefined,
  ) {
    this.state = state;
    this.problem = problem;
    this.known = problem === undefined;
    this.current = this.derive(config);
  }

  get policy(): VisibilityPolicy {
    return this.current;
  }

  get stateProblem(): WorkbenchError | undefined {
    return this.problem;
  }

  /** The state file's lists changed (a good read). */
  setState(state: ToolState | undefined, config: WorkbenchConfig): void {
    this.state = state;
    this.known = true;
    this.current = this.derive(config);
  }

  /** The state file turned broken, or (`undefined`) good again; call {@link setState} with its state first. */
  setProblem(problem: WorkbenchError | undefined): void {
    this.problem = problem;
  }

  /** The state file's problem while it is broken, and whether a good state read earlier in this run is in force. */
  broken(): { problem: WorkbenchError; lastGood: boolean } | undefined {
    return this.problem && { problem: this.problem, lastGood: this.known };
  }

  /**
   * The policy under another config, without applying it (a reload checks first, then {@link apply}s).
   * @throws WorkbenchError when the config no longer defines a toolset this session is limited to.
   */
  policyFor(config: WorkbenchConfig): VisibilityPolicy {
    return this.derive(config);
  }

  apply(policy: VisibilityPolicy): void {
    this.current = policy;
  }

  private derive(config: WorkbenchConfig): VisibilityPolicy {
    const sessionToolsets = this.sessionToolsets && sessionToolsetFilter(config, this.sessionToolsets);
    return createVisibilityPolicy({ config, cliDisabled: this.cliDisabled, state: this.state, sessionToolsets });
  }
}
