// The TypeScript client's data governance against a live server (admin keys): a workspace's archive
// exported and imported into an empty one, a text erased after its dry run, supersessions decided.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Conflict, ContextArchitect, InvalidRequest, NotFound, PermissionDenied } from "../dist/index.js";
import { ADMIN_A, ADMIN_EMPTY, BASE, ROOT_A, client, session } from "./live.mjs";

const admin = (apiKey = ADMIN_A) => new ContextArchitect({ baseUrl: BASE, apiKey });

test("a workspace's archive goes into an empty workspace, which then refuses another", async () => {
  const layer = await session(client(), "archive");
  const archive = await admin().exportWorkspace();
  const withVectors = await admin().exportWorkspace({ embeddings: true });
  const copy = admin(ADMIN_EMPTY);
  const restored = await copy.importWorkspace(archive);
  const full = await copy.importWorkspace(withVectors).catch((error) => error);
  const damaged = await copy.importWorkspace(new TextEncoder().encode("PK\u0003\u0004 not a zip")).catch((error) => error);
  const items = [];
  for await (const item of copy.iterItems({ page_size: 100 })) items.push(item);
  const refused = await client().exportWorkspace().catch((error) => error);

  assert.ok(archive instanceof Uint8Array && archive.length > 0);
  assert.deepEqual([...archive.subarray(0, 2)], [0x50, 0x4b]); // a zip
  assert.ok(withVectors.length > archive.length);
  assert.equal(restored.source.slug, "acme");
  assert.ok(restored.rows.items >= 3);
  assert.ok(items.some((item) => item.external_id === `${layer.id}-backups` && /35 days/.test(item.content)));
  assert.ok(full instanceof Conflict && full.code === "workspace_not_empty");
  assert.ok(damaged instanceof InvalidRequest && damaged.code.startsWith("archive_"));
  assert.ok(refused instanceof PermissionDenied); // a read+write key
});

test("a text is erased only after its dry run, and its receipts are listed", async () => {
  const ca = admin();
  const layer = await ca.createLayer({ kind: "session", name: "erasure", parent: ROOT_A });
  const phrase = `Quokka-${Date.now()} moved the standup`;
  const item = await ca.createItem({ layer: layer.id, kind: "memory", type: "fact", content: `${phrase} to 9:30.` });
  const unreviewed = await ca.erase({ text: phrase }).catch((error) => error);
  const dry = await ca.erase({ text: phrase, dry_run: true });
  const done = await ca.erase({ text: phrase, dry_run_id: dry.id });
  const listed = await ca.listErasures({ page_size: 100 });
  const again = await ca.getErasure(done.id);
  const gone = await ca.getItem(item.id).catch((error) => error);

  assert.ok(unreviewed instanceof InvalidRequest && unreviewed.code === "erasure_dry_run_required");
  assert.equal(dry.dry_run, true);
  assert.equal(dry.places.items.found, 1);
  assert.equal(done.dry_run, false);
  assert.equal(done.dry_run_of, dry.id);
  assert.equal(done.places.items.removed, 1);
  assert.ok(!JSON.stringify(done).includes("Quokka")); // the receipt keeps HMACs, not the text
  assert.ok([dry.id, done.id].every((id) => listed.results.some((one) => one.id === id)));
  assert.deepEqual(again, done);
  assert.ok(gone instanceof NotFound);
});

test("a proposed supersession is listed, accepted once and then refused", async () => {
  const ca = admin();
  const layer = await ca.createLayer({ kind: "project", name: "People", parent: ROOT_A });
  const old = await ca.createItem({ layer: layer.id, kind: "memory", type: "fact", content: "Alice lives in Paris." });
  await ca.waitUntilSearchable({ timeoutMs: 120_000, intervalMs: 200 });
  const newer = await ca.createItem({ layer: layer.id, kind: "memory", type: "fact", content: "Alice moved to Berlin." });
  await ca.waitUntilSearchable({ timeoutMs: 120_000, intervalMs: 200 });
  let pending = [];
  for (let tries = 0; tries < 50 && pending.length === 0; tries++) {
    // The embedder proposes right after its write-back: a moment after the backlog reads empty.
    pending = (await ca.listSupersessions({ layer: layer.id, state: "pending" })).results;
    if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(pending.length, 1);
  const [proposal] = pending;
  const accepted = await ca.acceptSupersession(proposal.id);
  const twice = await ca.rejectSupersession(proposal.id).catch((error) => error);
  const all = [];
  for await (const one of ca.iterSupersessions({ layer: layer.id })) all.push(one);

  assert.deepEqual([proposal.old.id, proposal.new.id, proposal.detector], [old.id, newer.id, "rules"]);
  assert.ok(proposal.similarity >= 0.88 && proposal.reason.length > 0);
  assert.equal(accepted.state, "accepted");
  assert.equal(accepted.old.superseded_by, newer.id);
  assert.match(accepted.decided_by, /^key admin/);
  assert.ok(twice instanceof Conflict && twice.code === "proposal_decided");
  assert.deepEqual(all.map((one) => [one.id, one.state]), [[proposal.id, "accepted"]]);
  assert.equal((await ca.getItem(old.id)).superseded_by, newer.id);
});
