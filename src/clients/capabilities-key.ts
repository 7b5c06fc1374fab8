import type { ClientCapabilities } from '@modelcontextprotocol/client';

/**
 * The client capabilities that matter downstream, as the MCP spec defines them and nothing else: sampling (with its
 * `context` and `tools`), elicitation (its `form` and `url` modes; an empty object is the form mode of older
 * clients) and roots (with `listChanged`). Whatever else a client writes inside them is dropped, and so is `tasks`
 * (no downstream server is told of it: the workbench sends its client no task-augmented request), so two clients
 * that can do the same things share connections and cached lists, and a client cannot make a new downstream
 * connection per request by varying made-up members (README "Serving over HTTP").
 */

type Caps = Record<string, unknown>;

const objectOf = (value: unknown): Caps | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Caps) : undefined);

/** The members of `value` named in `shape` that are objects, each as `{}` or (for a nested shape) reduced in turn. */
function reduce(value: Caps, shape: Readonly<Record<string, Shape>>): Caps {
  const out: Caps = {};
  for (const [name, inner] of Object.entries(shape)) {
    const member = objectOf(value[name]);
    if (member) out[name] = inner === true ? {} : reduce(member, inner);
  }
  return out;
}
type Shape = true | { readonly [name: string]: Shape };

const SAMPLING = { context: true, tools: true } as const;
const ELICITATION = { form: true, url: true } as const;

/** The relayable capabilities a downstream client declares for this upstream client: the spec's members only. */
export function relayableCapabilities(capabilities: ClientCapabilities | undefined): Pick<ClientCapabilities, 'sampling' | 'elicitation' | 'roots'> {
  const caps = (capabilities ?? {}) as Caps;
  const sampling = objectOf(caps.sampling);
  const elicitation = objectOf(caps.elicitation);
  const roots = objectOf(caps.roots);
  const relayable: Caps = {
    ...(sampling && { sampling: reduce(sampling, SAMPLING) }),
    ...(elicitation && { elicitation: reduce(elicitation, ELICITATION) }),
    ...(roots && { roots: roots.listChanged === true ? { listChanged: true } : {} }),
  };
  return relayable as Pick<ClientCapabilities, 'sampling' | 'elicitation' | 'roots'>;
}

/**
 * A stable name for the capabilities a downstream connection is made with: the relayable ones (above). A
 * server may list other tools for other capabilities (server-everything adds its sampling and elicitation tools only
 * for clients that can serve them), so connections are shared, and cached tool lists reused, only under the same key
 * (README "Catalog cache"). An empty `elicitation` counts as its form mode, which is what it means.
 */
export function capabilitiesKey(capabilities: ClientCapabilities | undefined): string {
  if (!capabilities) return '{}';
  const relayable = relayableCapabilities(capabilities) as Caps;
  const elicitation = objectOf(relayable.elicitation);
  if (elicitation && Object.keys(elicitation).length === 0) relayable.elicitation = { form: {} };
  return stableJson(relayable);
}

/** JSON with object keys sorted at every level. */
function stableJson(value: unknown): string {
  const object = objectOf(value);
  if (!object) return JSON.stringify(value) ?? 'null';
  const entries = Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
}
