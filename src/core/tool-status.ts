import type { OverrideResolver } from '../catalog/overrides.js';
import { overriddenText } from '../catalog/overrides.js';
import { revealHidden, revealInSchema } from '../shared/hidden-text.js';
import type { ToolboxCatalog } from '../catalog/toolbox-catalog.js';
import type { ToolStatus } from './tool-entry.js';

/**
 * Every loaded tool of a toolbox catalog, enabled or not (with the source that hid it), with the server's own
 * description and, when toolOverrides apply, what open_toolbox shows instead — for `list_all_tools` and `tools list`.
 */
export function toolStatuses(catalog: ToolboxCatalog, overrides: OverrideResolver): ToolStatus[] {
  const all = [...catalog.tools.map((t) => ({ t, status: undefined })), ...catalog.hidden.map((t) => ({ t, status: t.visibility }))];
  return all.map(({ t, status }) => {
    const override = overrides(t.toolbox, t.server, t.tool.name);
    return {
      name: t.name,
      toolbox: t.toolbox,
      server: t.server,
      original_name: t.tool.name,
      enabled: status === undefined,
      ...(status ? { disabled_by: { source: status.source, rule: status.rule, reason: status.reason } } : {}),
      ...(t.tool.description !== undefined ? { description: revealHidden(t.tool.description) } : {}),
      ...(override ? { override: revealInSchema(overriddenText(t.tool, override)) } : {}),
    };
  });
}
