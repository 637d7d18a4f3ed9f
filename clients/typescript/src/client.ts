/** `ContextArchitect`: the agent API of one workspace (the key's), over `fetch`. */

import { ConnectionFailed, ContextArchError, errorFor } from "./errors.js";
import { DEFAULT_RETRY, IDEMPOTENCY_HEADER, type RetryPolicy, retryAfterSeconds, retryable, retryDelay, sleep } from "./retry.js";
import { sseEvents } from "./sse.js";
import type * as T from "./types.js";

export const URL_ENV = "CONTEXTARCH_URL";
export const KEY_ENV = "CONTEXTARCH_API_KEY";
export const USER_AGENT = "contextarch-client-ts/0.1.0";

export interface ClientOptions {
  /** Defaults to the CONTEXTARCH_URL environment variable (where there is a `process`). */
  baseUrl?: string;
  /** Defaults to CONTEXTARCH_API_KEY. */
  apiKey?: string;
  /** Milliseconds for one attempt of one request (60 s by default). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Another `fetch` (a proxy agent, a test double of the network); the global one by default. */
  fetch?: typeof fetch;
}

interface Call {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  /**
   * Reads, assembly and consumption reports are sent again as they are (the default); other POSTs carry
   * an Idempotency-Key and are sent again with it; other calls (`idempotent: false`) only after a refused
   * connection, when nothing reached the service.
   */
  idempotent?: boolean;
  /** A body that is not JSON (an archive): its bytes and their type. */
  content?: { data: ArrayBuffer; type: string };
  /** Answer the body's bytes (an archive) instead of its JSON. */
  bytes?: boolean;
}

/** The workspace archive's type (`GET /api/v1/workspace/export/`, `POST /api/v1/workspace/import/`). */
export const ARCHIVE_TYPE = "application/zip";

function environment(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env?.[name];
}

/** Query parameters without the unset ones; lists repeated, booleans as true/false. */
function queryString(values: Record<string, unknown> | undefined): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values ?? {})) {
    if (value === undefined || value === null) continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(key, String(one));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class ContextArchitect {
  readonly baseUrl: string;
  readonly retry: RetryPolicy;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions = {}) {
    const baseUrl = options.baseUrl || environment(URL_ENV);
    const apiKey = options.apiKey || environment(KEY_ENV);
    if (!baseUrl) throw new ContextArchError(`give baseUrl or set ${URL_ENV}`, { code: "missing_base_url" });
    if (!apiKey) throw new ContextArchError(`give apiKey or set ${KEY_ENV}`, { code: "missing_api_key" });
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.apiKey = apiKey;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { Authorization: `Bearer ${this.apiKey}`, Accept: "application/json", "User-Agent": USER_AGENT, ...extra };
  }

  /** One attempt after another until an answer that is not worth retrying, or the retries run out. */
  private async send<R>(call: Call): Promise<R> {
    const type = call.content?.type ?? (call.body === undefined ? undefined : "application/json");
    const headers = this.headers(type === undefined ? {} : { "Content-Type": type });
    if (call.method === "POST" && call.idempotent === false) headers[IDEMPOTENCY_HEADER] = crypto.randomUUID();
    const mayRepeat = call.idempotent !== false || call.method === "POST";
    const url = `${this.baseUrl}${call.path}${queryString(call.query)}`;
    const body = call.content?.data ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    for (let attempt = 1; ; attempt++) {
      const retriesLeft = attempt <= this.retry.maxRetries;
      let response: Response;
      try {
        response = await this.fetch(url, {
          method: call.method,
          headers,
          body,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (error) {
        if (retriesLeft && (mayRepeat || refused(error))) {
          await sleep(retryDelay(this.retry, attempt));
          continue;
        }
        throw connectionFailed(error);
      }
      if (call.bytes && response.ok) return new Uint8Array(await response.arrayBuffer()) as R;
      const answer = await bodyOf(response);
      const retryAfter = retryAfterSeconds(response.headers.get("Retry-After"));
      if (retriesLeft && mayRepeat && retryable(response.status, answer)) {
        await sleep(retryDelay(this.retry, attempt, retryAfter));
        continue;
      }
      if (response.status >= 400) throw errorFor(response.status, answer, retryAfter);
      return answer as R;
    }
  }

  // -- context ------------------------------------------------------------------------------------

  /** Assemble context for a query within an exact token budget (`POST /api/v1/context/`). */
  getContext(params: T.ContextParams): Promise<T.ContextResult> {
    // Assembly changes no content (it records a trace): safe to send again.
    return this.send({ method: "POST", path: "/api/v1/context/", body: params });
  }

  /**
   * The same context as Server-Sent Events: one `chunk` event per chunk, then `complete`.
   * Errors (bad input, unknown layer) throw before the first event, as `getContext` does.
   */
  async *streamContext(params: T.ContextParams): AsyncGenerator<T.StreamEvent> {
    const url = `${this.baseUrl}/api/v1/context/stream/${queryString(params as Record<string, unknown>)}`;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(url, { headers: this.headers({ Accept: "text/event-stream" }) });
      } catch (error) {
        // Nothing arrived yet: try again.
        if (attempt > this.retry.maxRetries) throw connectionFailed(error);
        await sleep(retryDelay(this.retry, attempt));
        continue;
      }
      const retryAfter = retryAfterSeconds(response.headers.get("Retry-After"));
      if (response.status >= 400 || response.body === null) {
        const answer = await bodyOf(response);
        if (attempt <= this.retry.maxRetries && retryable(response.status, answer)) {
          await sleep(retryDelay(this.retry, attempt, retryAfter));
          continue;
        }
        throw errorFor(response.status, answer, retryAfter);
      }
      yield* sseEvents(response.body);
      return;
    }
  }

  /** Why each candidate was included or left out (`GET /api/v1/traces/{trace_id}/`). */
  getTrace(traceId: string): Promise<T.Trace> {
    return this.send({ method: "GET", path: `/api/v1/traces/${encodeURIComponent(traceId)}/` });
  }

  /** Which injected packages of one assembly were used (the same report again is idempotent). */
  reportConsumption(report: T.ConsumptionReport): Promise<T.ConsumptionRecorded> {
    return this.send({ method: "POST", path: "/api/v1/consumption/", body: report });
  }

  /**
   * Tokens of a `text`, or of chat `messages` and `tools`, for a `model` (`POST /api/v1/tokens/`): exact
   * where the model's tokenizer is known, else a calibrated estimate (`exact: false`) with its `margin`.
   */
  countTokens(params: T.TokenCountParams): Promise<T.TokenCount> {
    // Counting changes nothing: safe to send again.
    return this.send({ method: "POST", path: "/api/v1/tokens/", body: params });
  }

  // -- history, attempts and error patterns -------------------------------------------------------

  /** Past messages by meaning (`query`), by `task` or by `ids`, oldest first (`GET /api/v1/history/`). */
  searchHistory(params: T.HistoryParams): Promise<T.HistoryResult> {
    const ids = Array.isArray(params.ids) ? params.ids.join(",") : params.ids;
    return this.send({ method: "GET", path: "/api/v1/history/", query: { ...params, ids } });
  }

  /** Report an attempt; a success after a failure captures an error pattern. */
  recordAttempt(params: T.AttemptParams): Promise<T.AttemptRecorded> {
    return this.send({ method: "POST", path: "/api/v1/attempts/", body: params, idempotent: false });
  }

  /** Known fixes for an error, the exact signature first. */
  matchError(params: T.ErrorMatchParams): Promise<T.ErrorPatternMatches> {
    return this.send({ method: "POST", path: "/api/v1/error-patterns/match/", body: params });
  }

  // -- layers and items ---------------------------------------------------------------------------

  listLayers(query: T.LayerQuery & { page?: number } = {}): Promise<T.Page<T.Layer>> {
    return this.send({ method: "GET", path: "/api/v1/layers/", query });
  }

  /** Every matching layer, page after page. */
  iterLayers(query: T.LayerQuery = {}): AsyncGenerator<T.Layer> {
    return pages((page) => this.listLayers({ page_size: 100, ...query, page }));
  }

  getLayer(layerId: number): Promise<T.Layer> {
    return this.send({ method: "GET", path: `/api/v1/layers/${Math.trunc(layerId)}/` });
  }

  createLayer(layer: T.LayerCreate): Promise<T.Layer> {
    return this.send({ method: "POST", path: "/api/v1/layers/", body: layer, idempotent: false });
  }

  listItems(query: T.ItemQuery & { page?: number } = {}): Promise<T.Page<T.Item>> {
    return this.send({ method: "GET", path: "/api/v1/items/", query });
  }

  /** Every matching item, oldest first, page after page. */
  iterItems(query: T.ItemQuery = {}): AsyncGenerator<T.Item> {
    return pages((page) => this.listItems({ page_size: 100, ...query, page }));
  }

  getItem(itemId: number): Promise<T.Item> {
    return this.send({ method: "GET", path: `/api/v1/items/${Math.trunc(itemId)}/` });
  }

  createItem(item: T.ItemCreate): Promise<T.Item> {
    return this.send({ method: "POST", path: "/api/v1/items/", body: item, idempotent: false });
  }

  /** Change some fields of an item (`PATCH /api/v1/items/{item_id}/`); new content is embedded again. */
  updateItem(itemId: number, fields: T.ItemUpdate): Promise<T.Item> {
    return this.send({ method: "PATCH", path: `/api/v1/items/${Math.trunc(itemId)}/`, body: fields });
  }

  async deleteItem(itemId: number): Promise<void> {
    await this.send({ method: "DELETE", path: `/api/v1/items/${Math.trunc(itemId)}/`, idempotent: false });
  }

  /** Delete a layer with its descendants and their items (the company root cannot be deleted). */
  async deleteLayer(layerId: number): Promise<void> {
    await this.send({ method: "DELETE", path: `/api/v1/layers/${Math.trunc(layerId)}/`, idempotent: false });
  }

  /** Up to the server's bulk limit (1,000) in one all-or-nothing request; see `bulkLoad` for more. */
  createItems(layer: number, items: readonly T.ItemFields[]): Promise<T.BulkCreated> {
    const body = { layer, items };
    return this.send({ method: "POST", path: "/api/v1/items/bulk/", body, idempotent: false });
  }

  /**
   * Create many items in chunks (each all or nothing), reporting progress; `wait` until searchable.
   * A chunk that fails throws, with `details.created_ids` holding the ids of the chunks before it.
   */
  async bulkLoad(options: {
    layer: number;
    items: Iterable<T.ItemFields>;
    chunkSize?: number;
    onProgress?: (progress: T.BulkProgress) => void;
    wait?: boolean;
    timeoutMs?: number;
  }): Promise<T.BulkLoadResult> {
    const { layer, chunkSize = 500, onProgress, wait = true, timeoutMs = 600_000 } = options;
    if (!(chunkSize >= 1 && chunkSize <= 1000)) throw new RangeError("chunkSize must be 1..1000 (the API's bulk limit)");
    const items = [...options.items];
    const ids: number[] = [];
    let chunks = 0;
    for (let start = 0; start < items.length; start += chunkSize) {
      const chunk = items.slice(start, start + chunkSize);
      try {
        ids.push(...(await this.createItems(layer, chunk)).ids);
      } catch (error) {
        if (error instanceof ContextArchError) {
          error.details = { ...error.details, created_ids: [...ids], failed_chunk: chunks };
        }
        throw error;
      }
      chunks += 1;
      onProgress?.({ phase: "loading", done: start + chunk.length, total: items.length, chunks });
    }
    let searchable = false;
    if (wait) {
      const status = await this.waitUntilSearchable({
        timeoutMs,
        onProgress: (current) =>
          onProgress?.({
            phase: "embedding",
            done: items.length,
            total: items.length,
            chunks,
            pendingEmbedding: current.items_pending_embedding,
            etaSeconds: current.embedding_eta_seconds,
          }),
      });
      searchable = status.items_pending_embedding === 0;
    }
    return { ids, chunks, searchable };
  }

  // -- workspace archive and erasure (admin keys) -------------------------------------------------

  /**
   * The key's workspace as an archive (a zip: a manifest, then JSON lines per part), its bytes
   * (`GET /api/v1/workspace/export/`); `embeddings` includes the items' vectors.
   */
  exportWorkspace(options: { embeddings?: boolean } = {}): Promise<Uint8Array> {
    const query = { embeddings: options.embeddings ?? false };
    return this.send({ method: "GET", path: "/api/v1/workspace/export/", query, bytes: true });
  }

  /**
   * Restore an archive into the key's workspace, which must be empty (`POST /api/v1/workspace/import/`):
   * `Conflict` `workspace_not_empty`; a damaged or foreign archive is `InvalidRequest` (`archive_damaged`,
   * `archive_format_unknown`, `archive_member_missing`, `archive_invalid`).
   */
  async importWorkspace(archive: Uint8Array | ArrayBuffer | Blob): Promise<T.WorkspaceImported> {
    const data =
      archive instanceof Blob ? await archive.arrayBuffer() : archive instanceof ArrayBuffer ? archive : new Uint8Array(archive).buffer;
    // A POST with an Idempotency-Key: a repeat after a lost answer is answered, not restored twice.
    const content = { data, type: ARCHIVE_TYPE };
    return this.send({ method: "POST", path: "/api/v1/workspace/import/", content, idempotent: false });
  }

  /**
   * Erase what is named everywhere the service keeps it, and answer the receipt (`POST /api/v1/erasure/`).
   * `dry_run: true` only counts, per place. A `text` is erased only after its dry run: send the same
   * fields again with `dry_run_id` set to the dry run's `id`.
   */
  erase(params: T.ErasureParams): Promise<T.Erasure> {
    return this.send({ method: "POST", path: "/api/v1/erasure/", body: { dry_run: false, ...params }, idempotent: false });
  }

  /** The workspace's erasure receipts, newest first (`GET /api/v1/erasure/`). */
  listErasures(query: { page?: number; page_size?: number } = {}): Promise<T.Page<T.Erasure>> {
    return this.send({ method: "GET", path: "/api/v1/erasure/", query });
  }

  /** One erasure's receipt (`GET /api/v1/erasure/{erasure_id}/`). */
  getErasure(erasureId: number): Promise<T.Erasure> {
    return this.send({ method: "GET", path: `/api/v1/erasure/${Math.trunc(erasureId)}/` });
  }

  // -- supersessions ------------------------------------------------------------------------------

  /** Proposals that a newer item supersedes an older one, newest first (`GET /api/v1/supersessions/`). */
  listSupersessions(query: T.SupersessionQuery & { page?: number } = {}): Promise<T.Page<T.Supersession>> {
    return this.send({ method: "GET", path: "/api/v1/supersessions/", query });
  }

  /** Every matching proposal, page after page. */
  iterSupersessions(query: T.SupersessionQuery = {}): AsyncGenerator<T.Supersession> {
    return pages((page) => this.listSupersessions({ page_size: 100, ...query, page }));
  }

  /** Accept a pending proposal: the older item is superseded by the newer (a decided one: `Conflict` `proposal_decided`). */
  acceptSupersession(proposalId: number): Promise<T.Supersession> {
    // With an Idempotency-Key: a repeat after a lost answer gets that answer, not a 409 for its own decision.
    return this.send({ method: "POST", path: `/api/v1/supersessions/${Math.trunc(proposalId)}/accept/`, idempotent: false });
  }

  /** Reject a pending proposal: both items stay (a decided one: `Conflict` `proposal_decided`). */
  rejectSupersession(proposalId: number): Promise<T.Supersession> {
    return this.send({ method: "POST", path: `/api/v1/supersessions/${Math.trunc(proposalId)}/reject/`, idempotent: false });
  }

  status(): Promise<T.Status> {
    return this.send({ method: "GET", path: "/api/v1/status/" });
  }

  /** Poll `GET /api/v1/status/` until no item of the workspace waits for its embedding (or the timeout). */
  async waitUntilSearchable(
    options: { timeoutMs?: number; intervalMs?: number; onProgress?: (status: T.Status) => void } = {},
  ): Promise<T.Status> {
    const { timeoutMs = 600_000, intervalMs = 500, onProgress } = options;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await this.status();
      onProgress?.(current);
      if (current.items_pending_embedding === 0 || Date.now() >= deadline) return current;
      await sleep(intervalMs / 1000);
    }
  }
}

async function* pages<R>(fetchPage: (page: number) => Promise<T.Page<R>>): AsyncGenerator<R> {
  for (let page = 1; ; page++) {
    const answer = await fetchPage(page);
    yield* answer.results;
    if (!answer.next) return;
  }
}

/** Whether the connection was refused: nothing reached the service, so any call may go again. */
function refused(error: unknown): boolean {
  return (error as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
}

function connectionFailed(error: unknown): ConnectionFailed {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const message = cause?.message || (error instanceof Error ? error.message : String(error));
  return new ConnectionFailed(message, { code: "connection_failed", details: { reason: cause?.code ?? "" }, cause: error });
}
