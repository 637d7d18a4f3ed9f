// The TypeScript client against a live server: every method of its surface.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AuthenticationFailed,
  ContextArchitect,
  HISTORY_FIELDS,
  InvalidRequest,
  NotFound,
  STATUS_FIELDS,
  TRACE_FIELDS,
} from "../dist/index.js";
import { BASE, KEY_B, ROOT_B, client, session } from "./live.mjs";

const QUESTION = "How long are database backups kept?";

test("it assembles context and streams the same chunks, then the rest of the answer", async () => {
  const ca = client();
  const layer = await session(ca, "stream");
  const params = { layer: layer.id, query: QUESTION, token_budget: 200, timeout_ms: 0 };
  const answer = await ca.getContext(params);
  const events = [];
  for await (const event of ca.streamContext(params)) events.push(event);

  assert.match(answer.context, /35 days/);
  assert.ok(answer.total_tokens <= 200 && answer.chunks.length >= 1);
  const chunks = events.filter((e) => e.event === "chunk").map((e) => e.data.id);
  assert.deepEqual(chunks, answer.chunks.map((c) => c.id));
  const complete = events.at(-1);
  assert.equal(complete.event, "complete");
  assert.equal(complete.data.total_chunks, answer.chunks.length);
  assert.equal(complete.data.context, answer.context);
});

test("it explains an assembly by its trace and takes the consumption report once", async () => {
  const ca = client();
  const layer = await session(ca, "trace");
  const answer = await ca.getContext({ layer: layer.id, query: QUESTION });
  const trace = await ca.getTrace(answer.trace_id);
  const first = await ca.reportConsumption({ trace_id: answer.trace_id, used: [] });
  const again = await ca.reportConsumption({ trace_id: answer.trace_id, used: [] });

  assert.equal(trace.trace_id, answer.trace_id);
  assert.deepEqual(Object.keys(trace).sort(), [...TRACE_FIELDS].sort());
  assert.equal(trace.tokens_used, answer.total_tokens);
  assert.deepEqual([first.duplicate, again.duplicate], [false, true]);
});

test("it lists and iterates layers and items page after page", async () => {
  const ca = client();
  const layer = await session(ca, "pages");
  const more = Array.from({ length: 7 }, (_, n) => ({ kind: "memory", type: "fact", content: `Fact number ${n}.` }));
  await ca.createItems(layer.id, more);
  const item = await ca.createItem({ layer: layer.id, kind: "message", role: "user", content: "One more message." });

  const page = await ca.listItems({ layer: layer.id, page_size: 4 });
  const all = [];
  for await (const one of ca.iterItems({ layer: layer.id, page_size: 4 })) all.push(one);
  const layers = [];
  for await (const one of ca.iterLayers({ kind: "session", page_size: 1 })) layers.push(one.id);

  assert.equal(page.count, 11);
  assert.equal(page.results.length, 4);
  assert.equal(all.length, 11);
  assert.equal(new Set(all.map((i) => i.id)).size, 11);
  assert.equal((await ca.getItem(item.id)).content, "One more message.");
  assert.equal((await ca.getLayer(layer.id)).name, "pages");
  assert.ok(layers.includes(layer.id));
  assert.equal((await ca.listLayers({ external_id: layer.external_id })).results[0].id, layer.id);
});

test("it updates and deletes items and deletes layers", async () => {
  const ca = client();
  const layer = await session(ca, "edit");
  const item = await ca.createItem({ layer: layer.id, kind: "memory", type: "fact", content: "Lunch is at noon." });
  const updated = await ca.updateItem(item.id, { content: "Lunch is at one.", importance: 0.9 });
  await ca.deleteItem(item.id);
  const gone = await ca.getItem(item.id).catch((e) => e);
  await ca.deleteLayer(layer.id);
  const layerGone = await ca.getLayer(layer.id).catch((e) => e);

  assert.deepEqual([updated.id, updated.content, updated.importance], [item.id, "Lunch is at one.", 0.9]);
  assert.ok(gone instanceof NotFound);
  assert.ok(layerGone instanceof NotFound);
  assert.equal(layerGone.code, "layer_not_found");
});

test("it bulk loads in chunks with progress and waits until searchable", async () => {
  const ca = client();
  const layer = await ca.createLayer({ kind: "session", name: "bulk", parent: Number(process.env.CONTEXTARCH_ROOT_LAYER) });
  const items = Array.from({ length: 119 }, (_, n) => ({
    kind: "memory",
    type: "fact",
    content: `Service ${n} is owned by team ${n % 7}.`,
  }));
  items.push({ kind: "memory", type: "fact", content: "The payroll export runs on the first Monday." });
  const progress = [];
  const loaded = await ca.bulkLoad({ layer: layer.id, items, chunkSize: 50, onProgress: (p) => progress.push(p), timeoutMs: 300_000 });
  const status = await ca.status();
  const found = await ca.getContext({ layer: layer.id, query: "When do salaries get exported?", token_budget: 40 });

  assert.deepEqual([loaded.ids.length, loaded.chunks, loaded.searchable], [120, 3, true]);
  assert.deepEqual(
    progress.filter((p) => p.phase === "loading").map((p) => p.done),
    [50, 100, 120],
  );
  assert.equal(progress.at(-1).phase, "embedding");
  assert.equal(progress.at(-1).pendingEmbedding, 0);
  assert.equal(status.items_pending_embedding, 0);
  assert.deepEqual(Object.keys(status).sort(), [...STATUS_FIELDS].sort());
  assert.match(found.context, /payroll export/); // found by meaning: no word of the query is in it
});

test("a failed chunk throws with the ids already created", async () => {
  const ca = client();
  const layer = await ca.createLayer({ kind: "session", name: "bad-bulk", parent: Number(process.env.CONTEXTARCH_ROOT_LAYER) });
  const good = Array.from({ length: 4 }, (_, n) => ({ kind: "memory", type: "fact", content: `Fact number ${n}.` }));
  const error = await ca
    .bulkLoad({ layer: layer.id, items: [...good, { kind: "memory", type: "fact", content: "" }], chunkSize: 4, wait: false })
    .then(() => undefined, (e) => e);

  assert.ok(error instanceof InvalidRequest, String(error));
  assert.equal(error.details.failed_chunk, 1);
  assert.equal(error.details.created_ids.length, 4);
});

test("it records attempts, matches the captured error and searches history", async () => {
  const ca = client();
  const layer = await session(ca, "attempts");
  const error = "TimeoutError: upstream 10.1.2.3:443 did not answer in 30s";
  await ca.createItem({ layer: layer.id, kind: "message", role: "user", content: "Retry the upstream call twice." });
  const scope = { layer: layer.id, group_id: "g", agent_type: "coder" };
  await ca.recordAttempt({ ...scope, iteration: 1, outcome: "failed", error });
  const fixed = await ca.recordAttempt({ ...scope, iteration: 2, outcome: "succeeded", solution: "Raise the timeout to 60s." });
  const matched = await ca.matchError({ error });
  await ca.waitUntilSearchable({ timeoutMs: 120_000, intervalMs: 200 });
  const history = await ca.searchHistory({ query: "retry upstream", layer: layer.id, format: "json" });
  const byIds = await ca.searchHistory({ ids: [history.messages[0].id], layer: layer.id });

  assert.notEqual(fixed.captured, null);
  assert.equal(matched.matches[0].solution, "Raise the timeout to 60s.");
  assert.equal(history.messages[0].content, "Retry the upstream call twice.");
  assert.deepEqual(Object.keys(history).sort(), [...HISTORY_FIELDS].sort());
  assert.deepEqual(byIds.messages.map((m) => m.id), [history.messages[0].id]);
});

test("it counts tokens exactly for a known model and estimates for an unknown one", async () => {
  const ca = client();
  const exact = await ca.countTokens({ model: "gpt-4o", text: "hello world" });
  const chat = await ca.countTokens({ model: "gpt-4o", messages: [{ role: "user", content: "hello world" }] });
  const guessed = await ca.countTokens({ model: "some-future-model", text: "hello world" });
  const refused = await ca.countTokens({ model: "gpt-4o" }).catch((e) => e);

  assert.deepEqual([exact.tokens, exact.exact, exact.known, exact.encoding], [2, true, true, "o200k_base"]);
  assert.ok(chat.tokens > exact.tokens); // the message's framing counts too
  assert.deepEqual([guessed.exact, guessed.known], [false, false]);
  assert.ok(guessed.tokens > 0 && guessed.margin > 0);
  assert.ok(refused instanceof InvalidRequest, String(refused));
});

test("errors are exceptions of their code family", async () => {
  const ca = client();
  const layer = await session(ca, "errors");
  const other = new ContextArchitect({ baseUrl: BASE, apiKey: KEY_B });
  const stranger = new ContextArchitect({ baseUrl: BASE, apiKey: "ca_not_a_key" });

  const missing = await other.getContext({ layer: layer.id, query: QUESTION }).catch((e) => e);
  const invalid = await other.getContext({ layer: ROOT_B, query: QUESTION, token_budget: 0 }).catch((e) => e);
  const refused = await stranger.status().catch((e) => e);
  const streamed = await (async () => {
    for await (const _ of other.streamContext({ layer: layer.id, query: QUESTION })) return undefined;
  })().catch((e) => e);

  assert.ok(missing instanceof NotFound);
  assert.deepEqual([missing.status, missing.code], [404, "layer_not_found"]);
  assert.ok(invalid instanceof InvalidRequest);
  assert.deepEqual([invalid.status, invalid.code], [400, "invalid_token_budget"]);
  assert.ok(refused instanceof AuthenticationFailed);
  assert.deepEqual([refused.status, refused.code], [401, "invalid_api_key"]);
  assert.ok(streamed instanceof NotFound, String(streamed));
});

test("it reads its configuration from the environment and says what is missing", () => {
  assert.equal(new ContextArchitect().baseUrl, BASE);
  const saved = process.env.CONTEXTARCH_API_KEY;
  delete process.env.CONTEXTARCH_API_KEY;
  try {
    assert.throws(() => new ContextArchitect(), { code: "missing_api_key" });
  } finally {
    process.env.CONTEXTARCH_API_KEY = saved;
  }
});
