/** Defaults for the per-server limits; each can be overridden per server in the config. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 60_000;
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/** Upper bound for any single wait on a call, however much progress the server reports. */
export const DEFAULT_MAX_TOTAL_CALL_MS = 15 * 60_000;
/** Largest single message accepted from a downstream server. */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
