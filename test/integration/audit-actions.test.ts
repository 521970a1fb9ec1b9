import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { addMember, createCatalog, createOrganization, registerUser, setPlan } from "../helpers/fixtures";

// Each audited change leaves exactly one entry with the right before/after (issue 31).

async function catalog() {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  await setPlan(org.id, "pro");
  const ids = await createCatalog(owner, org.id);
  return { owner, organizationId: org.id as string, ...ids };
}

async function entriesFor(token: string, organizationId: string, entityId: string): Promise<any[]> {
  return expectOk(await call("GET", `/v1/organizations/${organizationId}/audit-events?entityId=${entityId}&limit=100`, { token }));
}

describe("audited changes", () => {
  it("a queue's settings, status, clearing and archiving", async () => {
    const { owner, organizationId, queueId } = await catalog();
    const token = owner.token;
    expectOk(await call("PATCH", `/v1/business/queues/${queueId}`, { token, body: { name: "Accueil", maxCapacity: 40 } }));
    // The same values again change nothing and record nothing.
    expectOk(await call("PATCH", `/v1/business/queues/${queueId}`, { token, body: { name: "Accueil" } }));
    expectOk(await call("PATCH", `/v1/business/queues/${queueId}/status`, { token, body: { status: "paused" } }));
    expectOk(await call("POST", `/v1/queues/${queueId}/clear`, { token }));
    expectOk(await call("POST", `/v1/queues/${queueId}/archive`, { token }));
    // The queue's creation is an entry too (every change is audited: src/audit/audited-operations.ts).
    const [created, ...entries] = (await entriesFor(token, organizationId, queueId)).reverse();
    expect(created.action).toBe("queue.created");
    expect(entries.map((e) => e.action)).toEqual(["queue.updated", "queue.status_changed", "queue.cleared", "queue.archived"]);
    expect(entries[0].changes).toEqual({ name: { before: "Main", after: "Accueil" }, maxCapacity: { before: null, after: 40 } });
    expect(entries[1].changes).toEqual({ status: { before: "active", after: "paused" } });
    for (const e of entries) expect(e.actor).toEqual({ type: "user", id: owner.id });
  });

  it("a service and a location", async () => {
    const { owner, organizationId, serviceId, locationId } = await catalog();
    const token = owner.token;
    expectOk(await call("PATCH", `/v1/services/${serviceId}`, { token, body: { name: "Guichet" } }));
    expectOk(await call("PATCH", `/v1/locations/${locationId}`, { token, body: { name: "Paris", address: "1 rue" } }));
    const [service] = await entriesFor(token, organizationId, serviceId);
    expect(service).toMatchObject({
      action: "service.updated",
      entityType: "service",
      changes: { name: { before: "Teller", after: "Guichet" } },
    });
    // Newest first: the update, then the location's creation.
    const locationEntries = await entriesFor(token, organizationId, locationId);
    expect(locationEntries.map((e) => e.action)).toEqual(["location.updated", "location.created"]);
    // The address did not change: only the name is recorded.
    expect(locationEntries[0].changes).toEqual({ name: { before: "Main", after: "Paris" } });
  });

  it("a member's role change and removal", async () => {
    const { owner, organizationId } = await catalog();
    const member = await addMember(owner, organizationId, "operator");
    expectOk(
      await call("PATCH", `/v1/organizations/${organizationId}/members/${member.id}`, { token: owner.token, body: { role: "manager" } }),
    );
    expectOk(
      await call("PATCH", `/v1/organizations/${organizationId}/members/${member.id}`, { token: owner.token, body: { role: "manager" } }),
    );
    expectOk(await call("DELETE", `/v1/organizations/${organizationId}/members/${member.id}`, { token: owner.token }));
    const entries = (await entriesFor(owner.token, organizationId, member.id)).reverse();
    expect(entries.map((e) => [e.action, e.changes.role])).toEqual([
      ["member.joined", undefined],
      ["member.role_changed", { before: "operator", after: "manager" }],
      ["member.removed", { before: "manager", after: null }],
    ]);
  });

  it("a location's rename shows the old and new name; its creation and deletion what was created and deleted, without personal data", async () => {
    const { owner, organizationId } = await catalog();
    const token = owner.token;
    const created = expectOk(
      await call("POST", "/v1/locations", {
        token,
        body: { organizationId, name: "Gare", address: "2 place", latitude: 45.76, longitude: 4.86, email: "gare@example.com" },
      }),
      201,
    );
    expectOk(await call("PATCH", `/v1/locations/${created.id}`, { token, body: { name: "Gare Part-Dieu" } }));
    expectOk(await call("DELETE", `/v1/locations/${created.id}`, { token }));
    const [deleted, renamed, made] = await entriesFor(token, organizationId, created.id);
    expect(made).toMatchObject({
      action: "location.created",
      changes: {
        name: { before: null, after: "Gare" },
        address: { before: null, after: "2 place" },
        email: { before: null, after: "[redacted]" },
      },
    });
    expect(renamed).toMatchObject({ action: "location.updated", changes: { name: { before: "Gare", after: "Gare Part-Dieu" } } });
    expect(deleted).toMatchObject({
      action: "location.deleted",
      changes: { name: { before: "Gare Part-Dieu", after: null }, email: { before: "[redacted]", after: null } },
    });
    expect(JSON.stringify([made, deleted])).not.toContain("gare@example.com");
  });

  it("a desk's creation, rename and deletion, each in the batch of its change", async () => {
    const { owner, organizationId, locationId, queueId } = await catalog();
    const token = owner.token;
    const desk = expectOk(
      await call("POST", `/v1/locations/${locationId}/desks`, { token, body: { name: "Guichet 1", queueIds: [queueId] } }),
      201,
    );
    expectOk(await call("PATCH", `/v1/desks/${desk.id}`, { token, body: { name: "Guichet A" } }));
    expectOk(await call("DELETE", `/v1/desks/${desk.id}`, { token }));
    const [deleted, renamed, made] = await entriesFor(token, organizationId, desk.id);
    expect(made).toMatchObject({
      action: "desk.created",
      changes: { name: { before: null, after: "Guichet 1" }, queueIds: { before: null, after: [queueId] } },
    });
    expect(renamed).toMatchObject({ action: "desk.updated", changes: { name: { before: "Guichet 1", after: "Guichet A" } } });
    expect(renamed.changes).not.toHaveProperty("queueIds");
    expect(deleted).toMatchObject({ action: "desk.deleted", changes: { name: { before: "Guichet A", after: null } } });
  });

  it("what the recorder writes for an operation without its own entry: an NFC tag's fields as created, then before and after", async () => {
    const { owner, organizationId, queueId } = await catalog();
    const token = owner.token;
    const nfcId = `tag-${Date.now()}`;
    expectOk(
      await call("POST", "/v1/nfc/tags", { token, body: { nfcId, queueId, locationName: "Porte", latitude: 48.85, longitude: 2.35 } }),
      201,
    );
    expectOk(await call("PATCH", `/v1/nfc/tags/${nfcId}`, { token, body: { locationName: "Porte Nord", enabled: false } }));
    const entries = await env.DB.prepare(
      "SELECT action, changes FROM audit_events WHERE organization_id = ? AND entity_type = 'nfc_tag' ORDER BY created_at",
    )
      .bind(organizationId)
      .all<{ action: string; changes: string }>();
    const [made, updated] = entries.results.map((e) => ({ action: e.action, changes: JSON.parse(e.changes) }));
    expect(made).toMatchObject({ action: "nfc_tag.created", changes: { locationName: { before: null, after: "Porte" } } });
    expect(updated).toEqual({
      action: "nfc_tag.updated",
      changes: { locationName: { before: "Porte", after: "Porte Nord" }, enabled: { before: true, after: false } },
    });
    // No row to load before the change (an organization's setting): what was asked.
    expectOk(await call("PATCH", `/v1/organizations/${organizationId}/sms-policy`, { token, body: { requirePhoneCode: true } }));
    const [policy] = await entriesFor(token, organizationId, organizationId);
    expect(policy).toMatchObject({ action: "sms_policy.updated", changes: { requirePhoneCode: { before: null, after: true } } });
  });

  it("the entry is written in the change's own batch: a change that fails leaves no entry, and an entry that cannot be written undoes the change", async () => {
    const { owner, organizationId, locationId, serviceId } = await catalog();
    const token = owner.token;
    // The change fails in D1 (a trigger refuses the rename): no entry.
    await env.DB.prepare(
      `CREATE TRIGGER refuse_rename_${locationId} BEFORE UPDATE OF name ON locations WHEN OLD.id = '${locationId}'
       BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    ).run();
    const failed = await call("PATCH", `/v1/locations/${locationId}`, { token, body: { name: "Jamais" } });
    expect(failed.status).toBe(500);
    await env.DB.prepare(`DROP TRIGGER refuse_rename_${locationId}`).run();
    const after = await entriesFor(token, organizationId, locationId);
    expect(after.map((e) => e.action)).toEqual(["location.created"]);

    // The entry cannot be written (a trigger refuses this organization's entries): neither is the change.
    await env.DB.prepare(
      `CREATE TRIGGER refuse_audit_${organizationId} BEFORE INSERT ON audit_events WHEN NEW.organization_id = '${organizationId}'
       BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    ).run();
    try {
      expect((await call("PATCH", `/v1/locations/${locationId}`, { token, body: { name: "Sans trace" } })).status).toBe(500);
      expect((await call("DELETE", `/v1/services/${serviceId}`, { token })).status).toBe(500);
      expect(
        (
          await call("POST", "/v1/locations", {
            token,
            body: { organizationId, name: "Sans trace", address: "3 rue", latitude: 45.7, longitude: 4.8 },
          })
        ).status,
      ).toBe(500);
    } finally {
      await env.DB.prepare(`DROP TRIGGER refuse_audit_${organizationId}`).run();
    }
    const locations = await env.DB.prepare("SELECT id, name FROM locations WHERE organization_id = ?").bind(organizationId).all();
    expect(locations.results).toEqual([{ id: locationId, name: "Main" }]);
    expectOk(await call("GET", `/v1/services/${serviceId}`, { token }));
    expect((await entriesFor(token, organizationId, locationId)).map((e) => e.action)).toEqual(["location.created"]);
  });
});
