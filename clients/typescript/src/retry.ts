/** When and how long to wait before trying a request again. */

export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** The 409 answered while the first request with the same key still runs. */
export const IN_PROGRESS = "idempotency_key_in_progress";

/**
 * Exponential backoff with full jitter, capped; `Retry-After` wins when the server sends it.
 *
 * Reads, context assembly and consumption reports are idempotent and simply sent again. A write
 * (POST) carries an `Idempotency-Key`, the same on every attempt, so the service answers a repeat
 * with the first answer instead of writing twice.
 */
export interface RetryPolicy {
  maxRetries: number;
  /** Seconds before the first retry (doubled each time, with full jitter). */
  backoff: number;
  /** Seconds at most between two attempts. */
  maxDelay: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 3, backoff: 0.5, maxDelay: 8 };

/** Seconds to wait before retry number `attempt` (1 for the first retry). */
export function retryDelay(policy: RetryPolicy, attempt: number, retryAfter?: number): number {
  if (retryAfter !== undefined) {
    return Math.min(Math.max(retryAfter, 0), policy.maxDelay);
  }
  return Math.random() * Math.min(policy.maxDelay, policy.backoff * 2 ** (attempt - 1));
}

/** The `Retry-After` header in seconds (only the delta-seconds form is used). */
export function retryAfterSeconds(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? seconds : undefined;
}

/** A status worth another attempt: 429/502/503/504, or a 409 while the same key's first request runs. */
export function retryable(status: number, body: unknown): boolean {
  if (RETRY_STATUSES.has(status)) return true;
  if (status !== 409 || typeof body !== "object" || body === null) return false;
  const error = (body as { error?: { code?: unknown } }).error;
  return error?.code === IN_PROGRESS;
}

export function sleep(seconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}
