/**
 * The API's shapes, named. Request bodies and typed answers come from `schema.ts`, generated from
 * the service's OpenAPI schema (`npm run types`; a test of the repository regenerates it and fails
 * on any difference). The few answers the schema leaves untyped (status, trace, history) are
 * written here, each with its field list, which the live tests hold to a real answer.
 */

import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
type Query<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

export type ContextParams = Schemas["ContextRequest"];
export type ContextResult = Schemas["ContextOutput"];
export type Chunk = Schemas["ChunkOutput"];
export type Layer = Schemas["LayerOutput"];
export type LayerCreate = Schemas["LayerCreate"];
export type Item = Schemas["ItemOutput"];
export type ItemCreate = Schemas["ItemCreate"];
export type ItemFields = Schemas["ItemFields"];
export type ItemUpdate = Schemas["PatchedItemUpdate"];
export type BulkCreated = Schemas["ItemBulkCreated"];
export type AttemptParams = Schemas["AttemptCreate"];
export type AttemptRecorded = Schemas["AttemptRecordedOutput"];
export type ErrorMatchParams = Schemas["ErrorPatternMatch"];
export type ErrorPatternMatches = Schemas["ErrorPatternMatches"];
export type ConsumptionReport = Schemas["ConsumptionReport"];
export type ConsumptionRecorded = Schemas["ConsumptionRecorded"];
export type ErrorBody = Schemas["Error"];
export type TokenCountParams = Schemas["TokenCountRequest"];
export type TokenCount = Schemas["TokenCount"];
export type WorkspaceImported = Schemas["WorkspaceImportOutput"];
export type ErasureParams = Schemas["ErasureCreate"];
export type Erasure = Schemas["ErasureOutput"];
export type Supersession = Schemas["ProposalOutput"];
export type SupersessionQuery = Omit<Query<"/api/v1/supersessions/">, "page">;
export type LayerQuery = Omit<Query<"/api/v1/layers/">, "page">;
export type ItemQuery = Omit<Query<"/api/v1/items/">, "page">;
/** `GET /api/v1/history/`: give `query`, `task` or `ids` (a list, or the comma-separated string). */
export type HistoryParams = Omit<Query<"/api/v1/history/">, "ids"> & { ids?: readonly number[] | string };

/** One page of a list (`count`, `next`, `previous`, `results`). */
export interface Page<T> {
  count: number;
  next?: string | null;
  previous?: string | null;
  results: T[];
}

/** One Server-Sent Event of `GET /api/v1/context/stream/`: a chunk, then `complete` with the rest of the answer. */
export type StreamEvent =
  | { event: "chunk"; data: Chunk }
  | { event: "complete"; data: Omit<ContextResult, "chunks"> & { total_chunks: number } };

/** The keys of a type, as a list that must name each key exactly once (checked by the compiler). */
type Exactly<T, L extends readonly (keyof T)[]> = [Exclude<keyof T, L[number]>] extends [never] ? L : never;

/** `GET /api/v1/status/`: counts, the embedding backlog, the background queue and the providers. */
export interface Status {
  workspace: string;
  layers: number;
  items: number;
  items_pending_embedding: number;
  /** The background embedder's recent rate. */
  embedding_items_per_s: number | null;
  /** The backlog at that rate; null before a rate is known. */
  embedding_eta_seconds: number | null;
  /** While the workspace is re-embedded for another model: `{from, to, since}`; null otherwise. */
  embedding_model_change: { from: string | null; to: string; since: string | null } | null;
  background: Record<string, unknown>;
  providers: Record<string, unknown>;
}
const statusFields = [
  "workspace",
  "layers",
  "items",
  "items_pending_embedding",
  "embedding_items_per_s",
  "embedding_eta_seconds",
  "embedding_model_change",
  "background",
  "providers",
] as const;
export const STATUS_FIELDS: Exactly<Status, typeof statusFields> = statusFields;

/** `GET /api/v1/traces/{trace_id}/`: the record of one assembly and the decision on each candidate. */
export interface Trace {
  trace_id: string;
  created_at: string;
  layer: number | null;
  request: Record<string, unknown>;
  model: string;
  encoding: string;
  tokens_used: number;
  token_budget: number;
  items_included: number;
  candidates_considered: number;
  overflow_count: number;
  truncated_count: number;
  elapsed_ms: number;
  assembly_cache_hit: boolean;
  embedding_cache_hit: boolean | null;
  timings: Record<string, unknown>;
  warnings: string[];
  sampled: boolean;
  consumption: Record<string, unknown>;
  trace: Record<string, unknown>[];
  /** "page" for a run from the pages (preview, compare, replay), else "agent". */
  origin: "agent" | "page";
  /** The proxied call that carried it (upstream, model, reported usage, our count), else null. */
  proxy: Record<string, unknown> | null;
}
const traceFields = [
  "trace_id",
  "created_at",
  "layer",
  "request",
  "model",
  "encoding",
  "tokens_used",
  "token_budget",
  "items_included",
  "candidates_considered",
  "overflow_count",
  "truncated_count",
  "elapsed_ms",
  "assembly_cache_hit",
  "embedding_cache_hit",
  "timings",
  "warnings",
  "sampled",
  "consumption",
  "trace",
  "origin",
  "proxy",
] as const;
export const TRACE_FIELDS: Exactly<Trace, typeof traceFields> = traceFields;

export interface HistoryMessage {
  id: number;
  layer: number;
  role: string;
  title: string;
  content: string;
  created_at: string;
  parent: number | null;
  task_ids: string[];
  importance: number;
  relevance: number | null;
}

export interface HistoryCommunity {
  id: number;
  kind: string;
  key: string;
  title: string;
  summary: string;
  layer: number;
}

/** `GET /api/v1/history/`: past messages (oldest first) and the context string they render to. */
export interface HistoryResult {
  context: string;
  format: string;
  total_tokens: number;
  model: string;
  messages: HistoryMessage[];
  communities: HistoryCommunity[];
  warnings: string[];
}
const historyFields = ["context", "format", "total_tokens", "model", "messages", "communities", "warnings"] as const;
export const HISTORY_FIELDS: Exactly<HistoryResult, typeof historyFields> = historyFields;

/** What `bulkLoad` did: the ids created, in input order, and whether all became searchable. */
export interface BulkLoadResult {
  ids: number[];
  chunks: number;
  searchable: boolean;
}

/** Where a bulk load is: items sent so far, then the embedding backlog while it waits. */
export interface BulkProgress {
  phase: "loading" | "embedding";
  done: number;
  total: number;
  chunks: number;
  pendingEmbedding?: number;
  etaSeconds?: number | null;
}
