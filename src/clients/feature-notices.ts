import type { Client } from '@modelcontextprotocol/client';

/**
 * What a downstream server tells its client about resources and prompts: a list changed, or a subscribed resource
 * was updated. The session routing decides who hears of it (src/core/feature-books.ts).
 */
export type ServerNotice = { kind: 'resources' } | { kind: 'prompts' } | { kind: 'updated'; uri: string; params: Record<string, unknown> };

/** Passes the server's resource and prompt notifications to `notice`, as they come. */
export function watchFeatureNotices(client: Client, notice: (notice: ServerNotice) => void): void {
  client.setNotificationHandler('notifications/resources/list_changed', () => notice({ kind: 'resources' }));
  client.setNotificationHandler('notifications/prompts/list_changed', () => notice({ kind: 'prompts' }));
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    const params = notification.params as Record<string, unknown>;
    if (typeof params.uri === 'string') notice({ kind: 'updated', uri: params.uri, params });
  });
}

/** The listen filter a modern server is asked for: every list change it can announce. */
export function listenFilter(client: Client): { toolsListChanged?: true; resourcesListChanged?: true; promptsListChanged?: true } {
  const capabilities = client.getServerCapabilities();
  return {
    ...(capabilities?.tools?.listChanged ? { toolsListChanged: true } : {}),
    ...(capabilities?.resources?.listChanged ? { resourcesListChanged: true } : {}),
    ...(capabilities?.prompts?.listChanged ? { promptsListChanged: true } : {}),
  };
}
