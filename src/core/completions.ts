import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { quoteClientText } from '../shared/client-text.js';
import { SOURCE_META_KEY, type Route } from './feature-books.js';
import { forwardTo, chosenRoute, type FeatureScope } from './feature-scope.js';
import { resolvePrompt } from './prompts.js';
import { templateOwners } from './resources.js';

/**
 * completion/complete, routed to the server that owns what is being completed (README "Resources, prompts and
 * completions"): a prompt argument by the prompt's workbench name (sent on under the server's own name), a resource
 * template variable by the template, which must be listed by exactly one connected server.
 */
export async function complete(scope: FeatureScope, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
  if (ref?.type === 'ref/prompt') {
    const { route, name } = resolvePrompt(scope, ref.name, 'completion/complete');
    return forwardTo(scope, route, 'completion/complete', { ...params, ref: { ...ref, name } });
  }
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
    const route = chosenRoute(scope, params._meta) ?? (await templateOwner(scope, ref.uri));
    return forwardTo(scope, route, 'completion/complete', params);
  }
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    'completion/complete needs params.ref: {"type":"ref/prompt","name":"{toolbox}__{server}__{prompt}"} or {"type":"ref/resource","uri":"<a template from resources/templates/list>"}.',
  );
}

/** The one connected server that lists the template; an error naming the candidates (or none) otherwise. */
async function templateOwner(scope: FeatureScope, template: string): Promise<Route> {
  const owners = await templateOwners(scope, template);
  if (owners.length === 1) return owners[0]!;
  const names = owners.map((r) => `"${r.toolbox}/${r.server}"`).join(', ');
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    owners.length === 0
      ? `No connected server lists the resource template ${quoteClientText(template)}. Call resources/templates/list for the templates of the open toolboxes (open_toolbox connects a toolbox's servers).`
      : `The resource template ${quoteClientText(template)} is listed by more than one server: ${names}. Name the one you mean in params._meta["${SOURCE_META_KEY}"].`,
  );
}
