/** Context Architect's TypeScript client: `ContextArchitect`, its errors and the API's types. */

export { ARCHIVE_TYPE, ContextArchitect, KEY_ENV, URL_ENV, type ClientOptions } from "./client.js";
export {
  AuthenticationFailed,
  Conflict,
  ConnectionFailed,
  ContextArchError,
  InvalidRequest,
  NotFound,
  PermissionDenied,
  RateLimited,
  ServerError,
  errorFor,
} from "./errors.js";
export { DEFAULT_RETRY, type RetryPolicy } from "./retry.js";
export type * from "./types.js";
export { HISTORY_FIELDS, STATUS_FIELDS, TRACE_FIELDS } from "./types.js";
export type { components, paths } from "./schema.js";
