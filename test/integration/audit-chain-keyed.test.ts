import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { auditHashInput } from "../../src/domain/audit";
import { call, expectOk } from "../helpers/api";
import { sweep } from "../helpers/cron";
import { createApiKey, createOrganization, registerUser } from "../helpers/fixtures";

// Issue 40: the audit chain is keyed (HMAC under a secret D1 does not hold), `verify` starts
// from the last signed checkpoint so its work does not grow with the chain, and reading the log
// never writes to it.

async function orgWithOwner() {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  return { owner, organizationId: org.id as string };
}

const verifyPath = (organizationId: string) => `/v1/organizations/${organizationId}/audit-events/verify`;

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** What someone who can write D1 but has no audit key does: change an entry, re-hash it and every later one with SHA-256. */
async function editAndRehash(organizationId: string, seq: number, clearKeyId: boolean): Promise<void> {
  await env.DB.prepare("UPDATE audit_events SET actor_id = 'usr_someoneelse00000000' WHERE organization_id = ? AND seq = ?")
    .bind(organizationId, seq)
    .run();
  const rows = await env.DB.prepare("SELECT * FROM audit_events WHERE organization_id = ? AND seq >= ? ORDER BY seq")
    .bind(organizationId, seq)
    .all<any>();
  let prev: string | null = rows.results[0].prev_hash;
  for (const r of rows.results) {
    const hash = await sha256Hex(
      auditHashInput({
        id: r.id,
        organizationId: r.organization_id,
        seq: r.seq,
        actorType: r.actor_type,
        actorId: r.actor_id,
        entityType: r.entity_type,
        entityId: r.entity_id,
        action: r.action,
        changes: r.changes,
        ip: r.ip,
        requestId: r.request_id,
        createdAt: r.created_at,
        prevHash: prev,
      }),
    );
    await env.DB.prepare(`UPDATE audit_events SET prev_hash = ?, hash = ?${clearKeyId ? ", key_id = NULL" : ""} WHERE id = ?`)
      .bind(prev, hash, r.id)
      .run();
    prev = hash;
  }
}

describe("audit chain: keyed", () => {
  it("an entry edited in D1 and the tail re-hashed with plain SHA-256 is detected (keeping or clearing the key id)", async () => {
    for (const clearKeyId of [false, true]) {
      const { owner, organizationId } = await orgWithOwner();
      for (let i = 0; i < 4; i++) await createApiKey(owner, organizationId, ["read"]);
      expect(expectOk(await call("GET", verifyPath(organizationId), { token: owner.token }))).toMatchObject({ valid: true, checked: 5 });
      const keyIds = await env.DB.prepare("SELECT DISTINCT key_id FROM audit_events WHERE organization_id = ?").bind(organizationId).all();
      expect(keyIds.results).toEqual([{ key_id: "dev" }]);

      const second = await env.DB.prepare("SELECT id FROM audit_events WHERE organization_id = ? AND seq = 2")
        .bind(organizationId)
        .first<{ id: string }>();
      await editAndRehash(organizationId, 2, clearKeyId);
      const verdict = expectOk(await call("GET", verifyPath(organizationId), { token: owner.token }));
      // The first broken entry is named: the one edited, although every later hash was recomputed.
      expect(verdict).toMatchObject({
        valid: false,
        checked: 1,
        brokenAt: { sequence: 2, entryId: second!.id, reason: clearKeyId ? "unkeyed_entry" : "hash_mismatch" },
      });
    }
  });

  it("a re-hashed entry after a signed checkpoint, or a forged checkpoint, is detected", async () => {
    const { owner, organizationId } = await orgWithOwner();
    for (let i = 0; i < 3; i++) await createApiKey(owner, organizationId, ["read"]);
    await sweep(Date.now());
    await createApiKey(owner, organizationId, ["read"]);
    const sound = expectOk(await call("GET", verifyPath(organizationId), { token: owner.token }));
    expect(sound).toMatchObject({ valid: true, fromCheckpoint: 4, checked: 2, firstSequence: 4, lastSequence: 5 });

    await editAndRehash(organizationId, 4, false);
    const broken = expectOk(await call("GET", verifyPath(organizationId), { token: owner.token }));
    expect(broken).toMatchObject({ valid: false, brokenAt: { sequence: 4, reason: "checkpoint_mismatch" } });

    // Moving the checkpoint onto the forged hash needs its signature, which needs the key.
    await env.DB.prepare(
      "UPDATE audit_checkpoints SET hash = (SELECT hash FROM audit_events WHERE organization_id = ? AND seq = 4) WHERE organization_id = ?",
    )
      .bind(organizationId, organizationId)
      .run();
    const forged = expectOk(await call("GET", verifyPath(organizationId), { token: owner.token }));
    expect(forged).toMatchObject({ valid: false, brokenAt: { sequence: 4, reason: "checkpoint_signature_invalid" } });
  });
});

describe("audit chain: verify in bounded work", () => {
  /** `n` entries written straight to D1 unsealed (as jobs leave them), then the minute cron seals and checkpoints. */
  async function chainOf(n: number) {
    const { owner, organizationId } = await orgWithOwner();
    const at = Date.now() - 60_000;
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO audit_events (id, organization_id, seq, actor_type, actor_id, entity_type, entity_id, action, changes, ip, request_id, created_at)
       SELECT 'aud_bulk' || ? || i, ?, NULL, 'system', NULL, 'queue', 'que_' || i, 'queue.updated', '{}', NULL, NULL, ? + i FROM n`,
    )
      .bind(n, organizationId, organizationId, at)
      .run();
    await sweep(Date.now());
    for (let i = 0; i < 3; i++) await createApiKey(owner, organizationId, ["read"]);
    return expectOk(await call("GET", verifyPath(organizationId), { token: owner.token }));
  }

  it("with 10,000 entries, verify reads about as many rows as with 10: the entries after the last checkpoint", async () => {
    const small = await chainOf(10);
    const large = await chainOf(10_000);
    // Entry 1 is the organization's creation, then the n written by a job.
    expect(small).toMatchObject({ valid: true, fromCheckpoint: 11, checked: 4, lastSequence: 14 });
    expect(large).toMatchObject({ valid: true, fromCheckpoint: 10_001, checked: 4, lastSequence: 10_004 });
    expect(large.rowsRead).toBeLessThan(50);
    expect(large.rowsRead).toBeLessThanOrEqual(small.rowsRead + 5);
  }, 120_000);
});

describe("audit log: reads never write", () => {
  it("listing and verifying leave an unsealed entry unsealed and the rows as they were", async () => {
    const { owner, organizationId } = await orgWithOwner();
    await createApiKey(owner, organizationId, ["read"]);
    // An entry a job wrote and the cron has not sealed yet.
    await env.DB.prepare(
      `INSERT INTO audit_events (id, organization_id, seq, actor_type, entity_type, entity_id, action, changes, created_at)
       VALUES ('aud_pendingjob000000000', ?, NULL, 'system', 'queue', 'que_x', 'queue.updated', '{}', ?)`,
    )
      .bind(organizationId, Date.now())
      .run();
    const snapshot = async () => ({
      entries: (await env.DB.prepare("SELECT * FROM audit_events WHERE organization_id = ? ORDER BY id").bind(organizationId).all())
        .results,
      checkpoints: (await env.DB.prepare("SELECT * FROM audit_checkpoints WHERE organization_id = ?").bind(organizationId).all()).results,
    });
    const before = await snapshot();
    const list = expectOk(await call("GET", `/v1/organizations/${organizationId}/audit-events`, { token: owner.token }));
    expect(list).toHaveLength(2);
    expect(expectOk(await call("GET", verifyPath(organizationId), { token: owner.token }))).toMatchObject({ valid: true, checked: 2 });
    expect(await snapshot()).toEqual(before);
    expect(before.entries.find((e: any) => e.id === "aud_pendingjob000000000")).toMatchObject({ seq: null, hash: null });

    // The next write seals it.
    await createApiKey(owner, organizationId, ["read"]);
    expect(expectOk(await call("GET", verifyPath(organizationId), { token: owner.token }))).toMatchObject({ valid: true, checked: 4 });
  });
});
