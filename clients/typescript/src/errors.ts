/**
 * Errors per family of the API's stable error codes: branch on the class, or on `code`.
 * The same families as the Python client (clients/python/src/contextarch_client/errors.py).
 */

export interface ErrorFields {
  code?: string;
  status?: number;
  details?: Record<string, unknown>;
  retryAfter?: number;
  cause?: unknown;
}

/** Any error answer of the API (`{"error": {"code", "message", "details"}}`) or of the transport. */
export class ContextArchError extends Error {
  readonly code: string;
  readonly status: number | undefined;
  details: Record<string, unknown>;
  readonly retryAfter: number | undefined;

  constructor(message: string, fields: ErrorFields = {}) {
    const code = fields.code ?? "error";
    super(fields.status === undefined ? `${code}: ${message}` : `${fields.status} ${code}: ${message}`, {
      cause: fields.cause,
    });
    this.name = new.target.name;
    this.code = code;
    this.status = fields.status;
    this.details = fields.details ?? {};
    this.retryAfter = fields.retryAfter;
  }
}

/** The service could not be reached (refused, reset, timed out) after the retries allowed. */
export class ConnectionFailed extends ContextArchError {}

/** 400: bad input (`invalid_<field>`, `missing_layer`, `malformed_json`, ...); also 413, 415, 422. */
export class InvalidRequest extends ContextArchError {}

/** 401: no key, or an unknown or revoked one (`not_authenticated`, `invalid_api_key`). */
export class AuthenticationFailed extends ContextArchError {}

/** 403: the key may not do this (e.g. a key without the scope). */
export class PermissionDenied extends ContextArchError {}

/** 404: missing, or in another workspace (`layer_not_found`, `trace_not_found`, ...). */
export class NotFound extends ContextArchError {}

/** 409: the request contradicts the stored state (e.g. another consumption report for a trace). */
export class Conflict extends ContextArchError {}

/** 429: too many requests; `retryAfter` is the server's `Retry-After` in seconds, when given. */
export class RateLimited extends ContextArchError {}

/** 5xx: the service failed or is unavailable (`service_unavailable`, ...). */
export class ServerError extends ContextArchError {}

const BY_STATUS: Record<number, typeof ContextArchError> = {
  400: InvalidRequest,
  401: AuthenticationFailed,
  403: PermissionDenied,
  404: NotFound,
  409: Conflict,
  413: InvalidRequest,
  415: InvalidRequest,
  422: InvalidRequest,
  429: RateLimited,
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The error for an error answer: its class from the status, its code and message from the body. */
export function errorFor(status: number, body: unknown, retryAfter?: number): ContextArchError {
  const error = isObject(body) ? body["error"] : undefined;
  let code: string;
  let message: string;
  let details: Record<string, unknown>;
  if (isObject(error)) {
    code = String(error["code"] ?? "error");
    message = String(error["message"] ?? "");
    details = isObject(error["details"]) ? error["details"] : { details: error["details"] };
  } else {
    code = `http_${status}`;
    message = (typeof body === "string" ? body : JSON.stringify(body ?? "")).slice(0, 500);
    details = {};
  }
  const Family = BY_STATUS[status] ?? (status >= 500 ? ServerError : ContextArchError);
  return new Family(message, { code, status, details, retryAfter });
}
