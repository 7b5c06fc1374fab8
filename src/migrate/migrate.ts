import { formatJsonPath } from '../config/expand-env.js';
import type { parseConfig } from '../config/load.js';
import { isRecord } from '../config/text.js';
import { WorkbenchError } from '../errors.js';
import { documentToEdit, finish } from './apply-plan.js';
import type { ConfigEdit } from './config-edit.js';
import { CLIENT_LABELS, type ImportedServers } from './import-client.js';
import { DEFAULT_MODE_NOTE, type Plan, planMigration } from './plan.js';

/**
 * `migrate`: turning a 0.9 config into a 0.10 one, and adding servers imported from another client's config. Every
 * result is checked with {@link parseConfig} (with every variable it uses set, so a variable missing from this shell
 * is not a failure) before it is offered; the file is edited in place, so its formatting, comment keys and key
 * order survive and the diff shows only what changed.
 *
 * What 0.9 configs had that 0.10 does not accept (from the 0.9 README, loader and types):
 * - top-level `"toolMode": "dynamic" | "proxy"` (dynamic was the default) → removed;
 * - `"transport"` on a server → renamed to `"type"` (0.10 still accepts the alias; `type` is what clients use);
 * - unknown keys, which 0.9 ignored and 0.10 rejects → kept as `_`-prefixed comment keys, so nothing is lost;
 * - toolbox and server names outside the 0.10 name rule → renamed to the closest valid name.
 */

/**
 * Migrates the text of a config file. `changes` is empty (and `after === before`) when it is already a 0.10 config.
 *
 * @throws WorkbenchError `CONFIG_PARSE` when the text is not JSON; `CONFIG_INVALID` (the loader's message and
 *   details) when problems remain that cannot be fixed mechanically — nothing should be written then.
 */
export function migrateConfigText(text: string, source: string): ConfigEdit {
  const document = documentToEdit(text, source);
  const plan = planMigration(document);
  if (plan.changes.length === 0) plan.notes.push(DEFAULT_MODE_NOTE);
  return finish(text, document, plan, source);
}

export interface ImportTarget {
  toolbox: string;
  description?: string;
  /** Add to an existing toolbox of that name instead of refusing (existing servers are never replaced). */
  merge?: boolean;
  /** `$schema` for a new file. */
  schema?: string;
  /** Where the servers came from, for the change list. */
  from: string;
}

/**
 * Adds imported servers as a toolbox to the config text `text` (migrating it too, if it is a 0.9 config), or to a
 * new config when `text` is undefined.
 *
 * @throws WorkbenchError `USAGE` when the toolbox exists and `merge` is not set; `CONFIG_PARSE`/`CONFIG_INVALID` as
 *   {@link migrateConfigText}, also when the existing file has no usable `toolboxes` object.
 */
export function importIntoConfigText(text: string | undefined, source: string, imported: ImportedServers, target: ImportTarget): ConfigEdit {
  const label = CLIENT_LABELS[imported.client];
  const description = target.description ?? `Imported from ${label} (${target.from})`;
  const toolboxValue = { description, mcpServers: Object.fromEntries(imported.servers) };
  const serverList = imported.servers.map(([name]) => name).join(', ');
  const about = Object.fromEntries(imported.variables.map((v) => [v.name, v.reason]));

  if (text === undefined) {
    const document = { ...(target.schema !== undefined && { $schema: target.schema }), toolboxes: { [target.toolbox]: toolboxValue } };
    const plan: Plan = {
      ops: [],
      changes: [{ path: `toolboxes.${target.toolbox}`, message: `new toolbox with ${imported.servers.length} server(s) from ${label}: ${serverList}` }],
      notes: [...imported.notes],
    };
    if (target.schema !== undefined) plan.notes.push(`"$schema" points to ${target.schema}, so editors can complete and check the file`);
    return finish('', document, plan, source, `${JSON.stringify(document, null, 2)}\n`, about);
  }

  const document = documentToEdit(text, source);
  const plan = planMigration(document);
  plan.notes.push(...imported.notes);
  if (!isRecord(document)) return finish(text, document, plan, source); // the loader explains what is wrong
  const toolboxes = document.toolboxes;
  const toolboxPath = ['toolboxes', target.toolbox];
  const intoExisting = isRecord(toolboxes) && toolboxes[target.toolbox] !== undefined;
  if (toolboxes === undefined) {
    plan.ops.push({ op: 'insert', path: [], entries: [['toolboxes', { [target.toolbox]: toolboxValue }]] });
  } else if (!isRecord(toolboxes)) {
    throw new WorkbenchError('CONFIG_INVALID', `${source}: "toolboxes" is not an object, so no toolbox can be added to it.`);
  } else if (toolboxes[target.toolbox] === undefined) {
    plan.ops.push({ op: 'insert', path: ['toolboxes'], entries: [[target.toolbox, toolboxValue]] });
  } else if (!target.merge) {
    throw new WorkbenchError(
      'USAGE',
      `${source} already has a toolbox "${target.toolbox}". Choose another name with --toolbox, or add --merge to add the imported servers to it (existing servers are never replaced).`,
    );
  } else {
    const existing = toolboxes[target.toolbox];
    const servers = isRecord(existing) ? existing.mcpServers : undefined;
    if (!isRecord(servers)) throw new WorkbenchError('CONFIG_INVALID', `${source}: toolbox "${target.toolbox}" has no "mcpServers" object to merge into.`);
    const entries: [string, unknown][] = [];
    for (const [name, entry] of imported.servers) {
      if (servers[name] === undefined) entries.push([name, entry]);
      else if (JSON.stringify(servers[name]) === JSON.stringify(entry)) plan.notes.push(`server "${name}" is already in toolbox "${target.toolbox}" with the same settings`);
      else plan.notes.push(`server "${name}" already exists in toolbox "${target.toolbox}" with other settings; the existing entry was kept and the imported one skipped`);
    }
    if (entries.length > 0) plan.ops.push({ op: 'insert', path: [...toolboxPath, 'mcpServers'], entries });
    imported = { ...imported, servers: imported.servers.filter(([name]) => entries.some(([added]) => added === name)) };
  }
  if (imported.servers.length > 0) {
    plan.changes.push({
      path: formatJsonPath(toolboxPath),
      message: `${intoExisting ? 'added' : 'new toolbox with'} ${imported.servers.length} server(s) from ${label}: ${imported.servers.map(([n]) => n).join(', ')}`,
    });
  }
  return finish(text, document, plan, source, undefined, about);
}
