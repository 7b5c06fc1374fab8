/** Defaults for the per-server limits; each can be overridden per server in the config. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 60_000;
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/** Upper bound for any single wait on a call, however much progress the server reports. */
export const DEFAULT_MAX_TOTAL_CALL_MS = 15 * 60_000;
/**
 * Largest single message accepted from a downstream server. Below 10 MiB on purpose: the TypeScript SDK's stdio
 * clients (both majors) close the whole connection on a message over 10 MiB, so a larger result passed on would end
 * the client's session rather than fail one call (README "Downstream servers: lifecycle, timeouts and limits").
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
