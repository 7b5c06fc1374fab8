import type { Stats } from 'node:fs';
import { lstat, open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { danglingLink, danglingLinkOn } from '../shared/dangling-link.js';
import { dirname, join, relative, resolve, isAbsolute, sep } from 'node:path';
import type { ErrorObject } from 'ajv';
import { loadBundledSchema, type BundledSchema } from './bundled-schema.js';
import { WorkbenchError } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import { clashMessage, normaliseOverrides, normaliseToolsets, toolsetNameClashes, type RawToolOverride, type RawToolset } from './catalog-settings.js';
import { formatJsonPath, type JsonPath } from './expand-env.js';
import { closest } from './problem-messages.js';
import { duplicateKeyMessage, jsonFileText, parseJsonDocument } from './parse-json.js';
import { NAME_RULE, isRecord } from './text.js';
import type { ProjectConfig, ToolOverrideRule, WorkbenchConfig } from './types.js';
import { reasonOf } from '../shared/errno.js';

export const PROJECT_FILE = '.mcp-workbench.json';

/**
 * Keys that would make the workbench start or reach something. A project file comes with a cloned repository, so
 * none of them is ever accepted there, wherever it appears.
 */
const LAUNCH_KEYS = new Set([
  'toolboxes', 'mcpServers', 'servers', 'command', 'args', 'env', 'cwd', 'inheritEnv', 'url', 'headers', 'type', 'transport',
]);

export interface ResolvedProjectPath {
  /** Absolute path of `.mcp-workbench.json`. */
  path: string;
  /** True when given with `--project` (then a missing file is an error, not "no project"). */
  explicit: boolean;
}

/** `--project DIR` (relative to `cwd`), else the start directory `cwd`. Never touches the file system. */
export function resolveProjectPath(opts: { flag?: string; cwd: string }): ResolvedProjectPath {
  const explicit = opts.flag !== undefined && opts.flag !== '';
  return { path: join(resolve(opts.cwd, explicit ? opts.flag! : '.'), PROJECT_FILE), explicit };
}

/**
 * Reads and validates the project file. Resolves `undefined` when it does not exist and was not asked for
 * explicitly. The text is parsed by the same function as the main config (so it follows the same JSON rules).
 *
 * @throws WorkbenchError
 *   - `CONFIG_NOT_FOUND` when `--project` named a directory without the file;
 *   - `CONFIG_UNREADABLE` / `CONFIG_PARSE` as for the config;
 *   - `CONFIG_INVALID` listing every problem with its JSON path, including any key that would add servers or
 *     commands (a project file can never do that).
 */
export async function loadProjectFile(resolved: ResolvedProjectPath): Promise<ProjectConfig | undefined> {
  const text = await readProjectText(resolved);
  if (text === undefined) return undefined;
  const document = parseJsonDocument(text, resolved.path, 'CONFIG_PARSE', 'A project file needs at least {} (README "Project file" lists its keys).', 'the project file');
  return parseProjectFile(document.value, resolved.path, document.duplicateKeys);
}

/**
 * The project file's text, read from the file that was opened and checked ({@link refuseLinkOutside}); `undefined`
 * when there is none and none was asked for.
 */
async function readProjectText(resolved: ResolvedProjectPath): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(resolved.path, 'r');
  } catch (error) {
    const code = isRecord(error) ? error.code : undefined;
    const dangling = code === 'ENOENT' ? await danglingLinkOn(resolved.path) : undefined;
    if (dangling !== undefined) {
      // Its rules are somewhere: not "no project file", which would lift its disabled tools without a word.
      throw new WorkbenchError('CONFIG_UNREADABLE', `Cannot read project file ${resolved.path}: ${danglingLink(dangling, resolved.path).message}. Restore what the link points to, or remove the link.`, { cause: error });
    }
    if ((code === 'ENOENT' || code === 'ENOTDIR') && !resolved.explicit) return undefined;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new WorkbenchError('CONFIG_NOT_FOUND', `Project file not found: ${resolved.path} (from --project). Create it, or drop --project.`, { cause: error });
    }
    throw unreadable(resolved.path, error);
  }
  try {
    await refuseLinkOutside(resolved.path, await handle.stat());
    return jsonFileText(await handle.readFile(), resolved.path, 'CONFIG_PARSE', 'the project file');
  } catch (error) {
    throw error instanceof WorkbenchError ? error : unreadable(resolved.path, error);
  } finally {
    await handle.close().catch(() => {});
  }
}

function unreadable(path: string, error: unknown): WorkbenchError {
  return new WorkbenchError('CONFIG_UNREADABLE', `Cannot read project file ${path}: ${reasonOf(error)}.`, { cause: error });
}

/** The nearest folder at or above `folder` that holds `.git` (a repository's work tree), if any. */
async function repositoryRoot(folder: string): Promise<string | undefined> {
  for (let current = folder; ; current = dirname(current)) {
    if (await lstat(join(current, '.git')).then(() => true, () => false)) return current;
    if (dirname(current) === current) return undefined;
  }
}

/**
 * A project file that is a symbolic link to a file outside its project (its repository, else its folder) is refused
 * before it is read: a cloned repository (or a `git pull`) could otherwise point it at a file of the user's
 * (`~/.secretrc`). A link within the project (a package's file linked to its monorepo's) is the project's own file.
 * The check is on the file that was opened (`opened`, its `fstat`): where the path leads now must be that very file
 * (same device and inode), so a link swapped between the open and the check is refused, never read.
 *
 * @throws WorkbenchError `CONFIG_UNREADABLE` naming the link and its target (never the target's content).
 */
async function refuseLinkOutside(path: string, opened: Stats): Promise<void> {
  const [target, own] = await Promise.all([realpath(path).catch(() => undefined), realpath(dirname(path)).catch(() => dirname(path))]);
  const now = target === undefined ? undefined : await stat(target).catch(() => undefined);
  if (now === undefined || now.dev !== opened.dev || now.ino !== opened.ino) {
    throw new WorkbenchError(
      'CONFIG_UNREADABLE',
      `Project file ${path} changed while it was read (it now leads to ${target ?? 'nothing'}, not to the file that was opened): it is not read. ` +
        'Load it again once it stays put (a running workbench does on its next change); if it keeps changing, find out what rewrites it.',
    );
  }
  // The project is its repository when it is in one (a package's file linked to the monorepo's), else its folder.
  const folder = (await repositoryRoot(own)) ?? own;
  if (isInside(folder, target!)) return;
  const link = await lstat(path).catch(() => undefined);
  throw new WorkbenchError(
    'CONFIG_UNREADABLE',
    `Project file ${path} is ${link?.isSymbolicLink() ? 'a symbolic link' : 'reached through a symbolic link'} to ${target}, outside the project (${folder}): it is not read ` +
      '(a repository could point it at any file of yours). Make it a plain file, or a link to a file inside the project.',
  );
}

/** Whether `target` is a file under `folder` (not the folder itself, nor reached by going up out of it). */
function isInside(folder: string, target: string): boolean {
  const rel = relative(folder, target);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * The annotation values that would make a tool look safer than its server says. A project file comes with a cloned
 * repository, so its `toolOverrides` may mark a tool destructive, not read-only, open-world (less safe), never the
 * other way round.
 */
const RELAXING: Readonly<Record<string, boolean>> = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** The project's override rules without the annotation values that relax a tool's safety, and which were dropped. */
function cautiousOverrides(rules: ToolOverrideRule[]): { rules: ToolOverrideRule[]; ignored: { pattern: string; key: string }[] } {
  const relaxes = ([key, value]: [string, unknown]): boolean => Object.hasOwn(RELAXING, key) && value === RELAXING[key];
  const ignored = rules.flatMap((rule) => Object.entries(rule.annotations ?? {}).filter(relaxes).map(([key]) => ({ pattern: rule.pattern, key })));
  if (ignored.length === 0) return { rules, ignored };
  const kept = rules.map((rule) => (rule.annotations ? { ...rule, annotations: Object.fromEntries(Object.entries(rule.annotations).filter((entry) => !relaxes(entry))) } : rule));
  return { rules: kept, ignored };
}

/**
 * Validates an already parsed project document (see {@link loadProjectFile}); `raw` is not modified. Keys written
 * twice (`duplicateKeys`, from the parser) are problems, as in the config.
 */
export function parseProjectFile(raw: unknown, source: string, duplicateKeys: readonly JsonPath[] = []): ProjectConfig {
  const problems = [...duplicateKeys.map((path): Problem => ({ path: [...path], message: duplicateKeyMessage() })), ...findProblems(raw)];
  if (problems.length > 0) throw invalidError(source, problems);
  const document = raw as {
    disabledTools?: string[];
    toolsets?: Record<string, RawToolset>;
    toolOverrides?: Record<string, RawToolOverride>;
    catalogBudget?: number;
  };
  return {
    source,
    disabledTools: [...(document.disabledTools ?? [])],
    toolsets: normaliseToolsets(document.toolsets, 'project'),
    toolOverrides: normaliseOverrides(document.toolOverrides),
    ...(document.catalogBudget !== undefined && { catalogBudget: document.catalogBudget }),
  };
}

/**
 * The config with the project file in effect: its toolsets are added (one named like a config toolset takes its place
 * and only narrows it: see `ToolsetConfig.within`),
 * its disabledTools and toolOverrides travel in `project` for the visibility policy and the catalog.
 *
 * @throws WorkbenchError `CONFIG_INVALID` when a project toolset has the name of a configured toolbox.
 */
export function applyProject(config: WorkbenchConfig, project: ProjectConfig | undefined): WorkbenchConfig {
  if (!project) return config;
  const toolboxNames = new Set(config.toolboxes.map((t) => t.name));
  const clashes = toolsetNameClashes(Object.fromEntries(project.toolsets.map((t) => [t.name, t])), toolboxNames);
  if (clashes.length > 0) {
    throw invalidError(
      project.source,
      clashes.map((name) => ({ path: ['toolsets', name], message: clashMessage(name, ` in ${config.source}`) })),
    );
  }
  // A project toolset named like a config toolset takes its place but only narrows it: a tool must match both.
  const configured = new Map((config.toolsets ?? []).map((t) => [t.name, t]));
  const narrowing = project.toolsets.map((t) => {
    const own = configured.get(t.name);
    return own ? { ...t, within: own.within ? [...own.within] : [...own.tools] } : t;
  });
  const { rules, ignored } = cautiousOverrides(project.toolOverrides);
  return {
    ...config,
    toolsets: [...(config.toolsets ?? []).filter((t) => !project.toolsets.some((p) => p.name === t.name)), ...narrowing],
    project: ignored.length === 0 ? project : { ...project, toolOverrides: rules },
    warnings: [
      ...config.warnings,
      ...project.toolsets
        .filter((t) => configured.has(t.name))
        .map((t) => `${project.source}: toolset "${t.name}" is also in ${config.source}; the project's only narrows it (a tool belongs to it when the patterns of both match).`),
      ...ignored.map(
        ({ pattern, key }) =>
          `${project.source}: toolOverrides ${JSON.stringify(pattern)} sets annotations.${key} to ${String(RELAXING[key])}, which would make a tool look safer ` +
          'than its server says; ignored (a project file can only make tools look less safe: set it in your config to mean it).',
      ),
    ],
  };
}

// ---------------------------------------------------------------------------------------------------------------

interface Problem {
  path: JsonPath;
  message: string;
}

let compiled: BundledSchema<'toolset' | 'override'> | undefined;

/** Compiled once per process, on first use. */
function schema(): BundledSchema<'toolset' | 'override'> {
  compiled ??= loadBundledSchema('mcp-workbench-project.schema.json', { toolset: 'toolset', override: 'toolOverride' });
  return compiled;
}

function findProblems(raw: unknown): Problem[] {
  const { validate, keys } = schema();
  if (validate(raw)) return [];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    if (error.propertyName !== undefined) continue; // propertyNames reports each bad name twice; keep the outer one
    const path = pointerToPath(error.instancePath);
    const problem = describe(error, path, keys);
    const key = `${formatJsonPath(problem.path)}\n${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

function describe(error: ErrorObject, path: JsonPath, keys: BundledSchema<'toolset' | 'override'>['keys']): Problem {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const at = [...path, key];
      if (LAUNCH_KEYS.has(key)) {
        return {
          path: at,
          message:
            `"${key}" is not allowed in a project file: a project file can never add servers or commands (a cloned ` +
            'repository must not make the workbench run anything). Define servers in your own workbench config; the ' +
            'project file may only contain disabledTools, toolsets, toolOverrides and catalogBudget',
        };
      }
      const level = path.length === 0 ? 'top' : path[path.length - 2] === 'toolOverrides' ? 'override' : 'toolset';
      const suggestion = closest(key, keys[level]);
      // As in the config: an unknown key is reported on the object that holds it.
      return {
        path,
        message: suggestion
          ? `unknown key ${quoteClientText(key, 60)}; did you mean "${suggestion}"?`
          : `unknown key ${quoteClientText(key, 60)} (allowed here: ${keys[level].join(', ')}; keys starting with "_" or "$" are comments)`,
      };
    }
    case 'propertyNames': {
      const name = String(params.propertyName);
      return { path: [...path, name], message: `invalid toolset name ${quoteClientText(name, 60)} (${NAME_RULE})` };
    }
    case 'required':
      return { path, message: `missing required key "${String(params.missingProperty)}"` };
    case 'minimum':
    case 'type':
      if (path[path.length - 1] === 'catalogBudget') return { path, message: 'must be a positive integer (characters)' };
      if (error.keyword === 'type') return { path, message: `must be ${article(String(params.type))}` };
      return { path, message: error.message ?? 'is out of range' };
    case 'minLength':
      return { path, message: 'must not be empty' };
    default:
      return { path, message: error.message ?? `fails "${error.keyword}"` };
  }
}

function article(type: string): string {
  return ({ object: 'an object', array: 'an array', integer: 'an integer', boolean: 'true or false' } as Record<string, string>)[type] ?? `a ${type}`;
}

function pointerToPath(pointer: string): JsonPath {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function invalidError(source: string, problems: readonly Problem[]): WorkbenchError {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return new WorkbenchError('CONFIG_INVALID', `${source} is not a valid project file (${count}):`, {
    details: problems.map((p) => `${formatJsonPath(p.path)}: ${p.message}`),
  });
}
