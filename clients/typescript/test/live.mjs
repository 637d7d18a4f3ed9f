// What the node tests share: the live server the pytest runner started (tests/clients/test_typescript_client.py)
// and a fresh session layer per test in workspace A.
import { ContextArchitect } from "../dist/index.js";

export const BASE = process.env.CONTEXTARCH_URL;
export const KEY_A = process.env.CONTEXTARCH_API_KEY;
export const KEY_B = process.env.CONTEXTARCH_OTHER_API_KEY;
export const ROOT_A = Number(process.env.CONTEXTARCH_ROOT_LAYER);
export const ROOT_B = Number(process.env.CONTEXTARCH_OTHER_ROOT_LAYER);
// Admin keys: workspace A's, and an empty workspace's to import an archive into.
export const ADMIN_A = process.env.CONTEXTARCH_ADMIN_API_KEY;
export const ADMIN_EMPTY = process.env.CONTEXTARCH_EMPTY_ADMIN_API_KEY;
if (!BASE || !KEY_A || !KEY_B || !ROOT_A || !ROOT_B || !ADMIN_A || !ADMIN_EMPTY) {
  throw new Error("run through tests/clients/test_typescript_client.py (it starts the live server)");
}

export const FACTS = [
  ["backups", "Database backups are taken nightly at 02:00 UTC and kept for 35 days."],
  ["deploys", "Builds are promoted from staging to production every Tuesday."],
  ["android", "The mobile app crashes on Android 12 when the camera permission is denied."],
];

export function client(options = {}) {
  return new ContextArchitect({ baseUrl: BASE, apiKey: KEY_A, ...options });
}

/** A new session layer under A's root holding FACTS, embedded. */
export async function session(ca, name) {
  const layer = await ca.createLayer({ kind: "session", name, parent: ROOT_A, external_id: `ts-${name}-${Date.now()}` });
  await ca.createItems(
    layer.id,
    FACTS.map(([external_id, content]) => ({ kind: "memory", type: "fact", content, external_id: `${layer.id}-${external_id}` })),
  );
  await ca.waitUntilSearchable({ timeoutMs: 120_000, intervalMs: 200 });
  return layer;
}
