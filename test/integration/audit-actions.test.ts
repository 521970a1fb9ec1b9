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
});
