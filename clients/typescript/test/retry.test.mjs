// Retries against a gateway in front of the live server that fails on purpose, and a server that comes up late.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { ConnectionFailed, ContextArchitect, ServerError } from "../dist/index.js";
import { BASE, KEY_A, client, session } from "./live.mjs";

const FAST = { maxRetries: 2, backoff: 0.01, maxDelay: 0.05 };

/**
 * A reverse proxy to the live server that first fails as `failures` say: `[status, headers, forwarded]`;
 * with `forwarded` the request still reaches the server first (a write lands, its answer is lost).
 */
async function gateway(port = 0) {
  const state = { failures: [], seen: [], keys: [] };
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    state.seen.push(`${request.method} ${request.url}`);
    state.keys.push(request.headers["idempotency-key"]);
    const forward = () =>
      fetch(BASE + request.url, {
        method: request.method,
        body: request.method === "GET" || request.method === "DELETE" ? undefined : body,
        headers: Object.fromEntries(
          ["authorization", "content-type", "accept", "idempotency-key"]
            .filter((name) => request.headers[name])
            .map((name) => [name, request.headers[name]]),
        ),
      });
    const failure = state.failures.shift();
    if (failure) {
      const [status, headers, forwarded] = failure;
      if (forwarded) await (await forward()).arrayBuffer();
      response.writeHead(status, { ...headers, "Content-Length": "0" }).end();
      return;
    }
    const answer = await forward();
    const payload = Buffer.from(await answer.arrayBuffer());
    response.writeHead(answer.status, { "Content-Type": answer.headers.get("content-type") ?? "application/json" });
    response.end(payload);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${server.address().port}`;
  state.close = () => new Promise((resolve) => server.close(resolve));
  return state;
}

test("it retries 429 and 5xx, and a write whose answer was lost lands once", async (t) => {
  const ca = client();
  const layer = await session(ca, "retry");
  const gate = await gateway();
  t.after(gate.close);
  const through = new ContextArchitect({ baseUrl: gate.url, apiKey: KEY_A, retry: FAST });

  gate.failures = [[503, {}, false], [429, { "Retry-After": "0" }, false]];
  assert.ok((await through.status()).workspace);
  const reads = gate.seen.splice(0);

  gate.keys.length = 0;
  gate.failures = [[502, {}, true]]; // the item is written, the answer is lost on the way back
  const item = await through.createItem({ layer: layer.id, kind: "memory", type: "fact", content: "Written once." });
  const writes = gate.seen.splice(0);
  const keys = gate.keys.splice(0);
  const once = await ca.listItems({ layer: layer.id, page_size: 100 });

  gate.failures = [[502, {}, true]]; // a delete lands, its answer is lost: not sent again (it would be a 404)
  const deleted = await through.deleteItem(item.id).catch((e) => e);
  const deletes = gate.seen.splice(0);

  gate.failures = Array(5).fill([502, {}, false]);
  const exhausted = await through.status().catch((e) => e);

  assert.deepEqual(reads, Array(3).fill("GET /api/v1/status/"));
  assert.deepEqual(writes, Array(2).fill("POST /api/v1/items/"));
  assert.ok(keys[0] && keys[0] === keys[1]);
  assert.deepEqual(
    once.results.filter((i) => i.content === "Written once.").map((i) => i.id),
    [item.id],
  );
  assert.ok(deleted instanceof ServerError);
  assert.deepEqual(deletes, [`DELETE /api/v1/items/${item.id}/`]);
  const stored = await ca.listItems({ layer: layer.id, page_size: 100 });
  assert.deepEqual(stored.results.filter((i) => i.content === "Written once."), []);
  assert.ok(exhausted instanceof ServerError);
  assert.equal(exhausted.status, 502);
  assert.deepEqual(gate.seen, Array(3).fill("GET /api/v1/status/")); // 1 + maxRetries
});

test("it retries after a refused connection until the server is up, and says when it never came", async (t) => {
  const probe = await gateway();
  const port = Number(new URL(probe.url).port);
  await probe.close(); // nobody listens on `port` now

  let refused = 0;
  const counting = async (...args) => {
    try {
      return await fetch(...args);
    } catch (error) {
      refused += 1;
      throw error;
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const late = new ContextArchitect({ baseUrl: url, apiKey: KEY_A, retry: { maxRetries: 200, backoff: 0.05, maxDelay: 0.2 }, fetch: counting });
  const answer = late.status();
  while (refused === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  const gate = await gateway(port);
  t.after(gate.close);

  assert.ok((await answer).workspace);
  assert.ok(refused >= 1);

  const never = new ContextArchitect({ baseUrl: "http://127.0.0.1:9", apiKey: KEY_A, retry: FAST });
  const failed = await never.status().catch((e) => e);
  assert.ok(failed instanceof ConnectionFailed);
  assert.equal(failed.code, "connection_failed");
});
