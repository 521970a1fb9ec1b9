import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AUDITED, NOT_AUDITED } from "../../src/audit/audited-operations";
import { AUDIT_ACTIONS } from "../../src/domain/audit";
import { call, expectOk, unique } from "../helpers/api";
import { createOrganization, registerUser, setPlan, type TestUser } from "../helpers/fixtures";

// Issue 40: every operation that changes something leaves exactly one audit entry naming who
// did it, what they did and to what. The document is walked: each changing operation is either
// audited or excluded with its reason (src/audit/audited-operations.ts). Then an owner performs
// the management surface's changes and each request (found by its X-Request-ID) left one entry.

const CHANGING = ["post", "put", "patch", "delete"];

async function changingOperations(): Promise<string[]> {
  const doc = (await call("GET", "/v1/openapi.json")).body;
  return Object.values<any>(doc.paths).flatMap((item) =>
    Object.entries<any>(item)
      .filter(([method]) => CHANGING.includes(method))
      .map(([, op]) => op.operationId as string),
  );
}

async function allOperations(): Promise<string[]> {
  const doc = await call("GET", "/v1/openapi.json");
  return Object.values<any>(doc.body.paths).flatMap((item) => Object.values<any>(item).map((op) => op.operationId as string));
}

describe("audit coverage: the API document", () => {
  it("every operation that changes something is audited or excluded with a reason, never both", async () => {
    const changing = await changingOperations();
    expect(changing.length).toBeGreaterThan(100);
    expect(changing.filter((id) => !(id in AUDITED) && !(id in NOT_AUDITED))).toEqual([]);
    expect(changing.filter((id) => id in AUDITED && id in NOT_AUDITED)).toEqual([]);
    const known = await allOperations();
    expect([...Object.keys(AUDITED), ...Object.keys(NOT_AUDITED)].filter((id) => !known.includes(id))).toEqual([]);
    for (const reason of Object.values(NOT_AUDITED)) expect(reason.length).toBeGreaterThan(10);
    // The recorder's actions are the log's catalogue (docs/security.md), one name per change.
    const catalogue: readonly string[] = AUDIT_ACTIONS;
    expect(Object.values(AUDITED).filter((a) => !catalogue.includes(a.action))).toEqual([]);
    expect(new Set(AUDIT_ACTIONS).size).toBe(AUDIT_ACTIONS.length);
  });
});

interface Entry {
  actor_type: string;
  actor_id: string | null;
  action: string;
  entity_type: string;
  entity_id: string;
}

/** Sends one change as `owner` with its own request id and answers the entries that request left. */
async function change(owner: TestUser, organizationId: string, method: string, path: string, body?: unknown) {
  const requestId = `audit-walk-${unique("r")}`;
  const res = await call(method, path, {
    token: owner.token,
    body,
    headers: { "X-Request-ID": requestId, "X-Organization-Id": organizationId },
  });
  expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).toBeLessThan(300);
  const entries = await env.DB.prepare("SELECT actor_type, actor_id, action, entity_type, entity_id FROM audit_events WHERE request_id = ?")
    .bind(requestId)
    .all<Entry>();
  return { data: res.body?.data, entries: entries.results };
}

describe("audit coverage: an owner's changes", () => {
  it("each change of the management surface leaves exactly one entry naming the owner, the action and the target", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const organizationId: string = org.id;
    await setPlan(organizationId, "pro");
    const seen: string[] = [];
    const expectOne = (what: { entries: Entry[] }, action: string, entityId: string) => {
      expect(what.entries, action).toHaveLength(1);
      expect(what.entries[0]).toEqual({
        actor_type: "user",
        actor_id: owner.id,
        action,
        entity_type: action.split(".")[0],
        entity_id: entityId,
      });
      seen.push(action);
    };
    const o = `/v1/organizations/${organizationId}`;

    // The organization's creation itself.
    const created = await env.DB.prepare(
      "SELECT actor_id, action, entity_id FROM audit_events WHERE organization_id = ? AND action = 'organization.created'",
    )
      .bind(organizationId)
      .all();
    expect(created.results).toEqual([{ actor_id: owner.id, action: "organization.created", entity_id: organizationId }]);

    expectOne(await change(owner, organizationId, "PATCH", o, { name: "Banque du Port" }), "organization.updated", organizationId);
    const location = await change(owner, organizationId, "POST", "/v1/locations", {
      organizationId,
      name: "Agence",
      address: "1 quai",
      latitude: 48.85,
      longitude: 2.35,
    });
    expectOne(location, "location.created", location.data.id);
    const service = await change(owner, organizationId, "POST", "/v1/services", {
      name: "Guichet",
      locationIds: [location.data.id],
      serviceTypeId: "st_bank_teller",
    });
    expectOne(service, "service.created", service.data.id);
    const serviceId: string = service.data.id;
    expectOne(
      await change(owner, organizationId, "POST", `/v1/services/${serviceId}/outcomes`, { code: "done", label: "Done" }),
      "service.outcome_created",
      serviceId,
    );
    const queue = await change(owner, organizationId, "POST", "/v1/business/queues", { serviceId, name: "Accueil" });
    expectOne(queue, "queue.created", queue.data.id);
    const queueId: string = queue.data.id;
    // Already recorded by the route in the batch of the change: still exactly one.
    expectOne(
      await change(owner, organizationId, "PATCH", `/v1/business/queues/${queueId}`, { name: "Accueil 2" }),
      "queue.updated",
      queueId,
    );
    const desk = await change(owner, organizationId, "POST", `/v1/locations/${location.data.id}/desks`, {
      name: "Guichet 1",
      queueIds: [queueId],
    });
    expectOne(desk, "desk.created", desk.data.id);
    expectOne(
      await change(owner, organizationId, "PATCH", `/v1/desks/${desk.data.id}`, { name: "Guichet A" }),
      "desk.updated",
      desk.data.id,
    );
    expectOne(await change(owner, organizationId, "DELETE", `/v1/desks/${desk.data.id}`), "desk.deleted", desk.data.id);
    expectOne(
      await change(owner, organizationId, "PUT", `${o}/message-templates/appointment.reminder`, {
        language: "fr",
        title: "À demain",
        body: "{title} le {time}.",
      }),
      "message_template.updated",
      "appointment.reminder",
    );
    expectOne(
      await change(owner, organizationId, "DELETE", `${o}/message-templates/appointment.reminder?language=fr`),
      "message_template.reset",
      "appointment.reminder",
    );
    expectOne(
      await change(owner, organizationId, "PATCH", `${o}/sms-policy`, { requirePhoneCode: true }),
      "sms_policy.updated",
      organizationId,
    );
    const key = await change(owner, organizationId, "POST", `${o}/api-keys`, { name: "Caisse" });
    expectOne(key, "api_key.created", key.data.id);
    expectOne(await change(owner, organizationId, "DELETE", `${o}/api-keys/${key.data.id}`), "api_key.revoked", key.data.id);
    const invited = await change(owner, organizationId, "POST", `${o}/members`, { email: `${unique("m")}@example.com`, role: "operator" });
    expectOne(invited, "invitation.created", invited.data.id);
    expectOne(await change(owner, organizationId, "DELETE", `/v1/services/${serviceId}`), "service.deleted", serviceId);
    expectOne(await change(owner, organizationId, "DELETE", `/v1/locations/${location.data.id}`), "location.deleted", location.data.id);

    // A refused change records nothing.
    const refused = await call("PATCH", `/v1/desks/${desk.data.id}`, { token: owner.token, body: { name: "Gone" } });
    expect(refused.status).toBe(404);
    expect(seen).toHaveLength(17);
    const catalogue: readonly string[] = AUDIT_ACTIONS;
    const written = await env.DB.prepare("SELECT DISTINCT action FROM audit_events WHERE organization_id = ?")
      .bind(organizationId)
      .all<{ action: string }>();
    expect(written.results.map((r) => r.action).filter((a) => !catalogue.includes(a))).toEqual([]);
    // And the log still verifies.
    expect(expectOk(await call("GET", `${o}/audit-events/verify`, { token: owner.token }))).toMatchObject({ valid: true, brokenAt: null });
  });
});
