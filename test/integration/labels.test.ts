import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { addMember, createApiKey, queueFixture, walkIn } from "../helpers/fixtures";

// Ticket labels (docs/visits.md): staff put and take off labels, the organization keeps the
// list it used, listings filter by label, D1 holds them with the ticket.

describe("POST/DELETE /v1/tickets/{ticketId}/labels", () => {
  it("puts, keeps once, takes off; grows the organization's list; filters the queue's listing", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const [a, b, c] = [await walkIn(operator, f.queueId), await walkIn(operator, f.queueId), await walkIn(operator, f.queueId)];
    const label = (id: string, body: unknown, token = operator.token) => call("POST", `/v1/tickets/${id}/labels`, { token, body });

    expect(expectOk(await label(a.id, { label: "Interpreter" })).labels).toEqual(["interpreter"]);
    expect(expectOk(await label(a.id, { label: "interpreter" })).labels).toEqual(["interpreter"]);
    expect(expectOk(await label(a.id, { label: "second-visit" })).labels).toEqual(["interpreter", "second-visit"]);
    expectOk(await label(c.id, { label: "interpreter" }));

    const page = await call("GET", `/v1/queues/${f.queueId}/tickets?label=interpreter&status=waiting`, { token: operator.token });
    expect(page.body.data.map((t: any) => [t.id, t.position])).toEqual([
      [a.id, 1],
      [c.id, 3],
    ]);
    expect(page.body.meta.total).toBe(2);
    const all = await call("GET", `/v1/queues/${f.queueId}/tickets?label=second-visit`, { token: operator.token });
    expect(all.body.data.map((t: any) => t.id)).toEqual([a.id]);

    const removed = expectOk(await call("DELETE", `/v1/tickets/${a.id}/labels/interpreter`, { token: operator.token }));
    expect(removed.labels).toEqual(["second-visit"]);
    expect(expectOk(await call("DELETE", `/v1/tickets/${b.id}/labels/interpreter`, { token: operator.token })).labels).toEqual([]);

    const list = expectOk(await call("GET", `/v1/organizations/${f.organizationId}/labels`, { token: operator.token }));
    expect(list.map((l: any) => l.label)).toEqual(["interpreter", "second-visit"]);

    await settle(f.queueId);
    const row = await env.DB.prepare("SELECT labels FROM tickets WHERE id = ?").bind(a.id).first<{ labels: string }>();
    expect(JSON.parse(row!.labels)).toEqual(["second-visit"]);
  });

  it("refuses a bad label by field, an 11th label, a caller who cannot operate", async () => {
    const f = await queueFixture("pro");
    const ticket = await walkIn(f.owner, f.queueId);
    const label = (body: unknown, auth: Record<string, string> = { token: f.owner.token }) =>
      call("POST", `/v1/tickets/${ticket.id}/labels`, { ...auth, body });
    expectError(await label({ label: "" }), 400, "VALIDATION_ERROR", "label");
    expectError(await label({ label: "two words" }), 400, "VALIDATION_ERROR", "label");
    expectError(await label({ label: "x".repeat(33) }), 400, "VALIDATION_ERROR", "label");
    expectError(await label({}), 400, "VALIDATION_ERROR", "label");
    for (let i = 0; i < 10; i++) expectOk(await label({ label: `l${i}` }));
    expectError(await label({ label: "l10" }), 409, "CONFLICT", "label");
    const reader = await createApiKey(f.owner, f.organizationId, ["read"]);
    expectError(await label({ label: "vip" }, { apiKey: reader.key }), 403, "AUTHORIZATION_ERROR");
    expectError(
      await call("GET", `/v1/queues/${f.queueId}/tickets?label=a%20b`, { token: f.owner.token }),
      400,
      "VALIDATION_ERROR",
      "label",
    );
  });

  it("a full organization list refuses a new label (409, the ticket unchanged) and still takes one it holds", async () => {
    const f = await queueFixture("pro");
    const ticket = await walkIn(f.owner, f.queueId);
    // The list as staff left it: 200 labels (MAX_ORGANIZATION_LABELS), written straight into D1.
    const names = Array.from({ length: 200 }, (_, i) => `kept-${i}`);
    await env.DB.prepare(
      "INSERT INTO organization_labels (organization_id, label, created_at) SELECT ?1, j.value, 0 FROM json_each(?2) AS j",
    )
      .bind(f.organizationId, JSON.stringify(names))
      .run();
    const label = (value: string) => call("POST", `/v1/tickets/${ticket.id}/labels`, { token: f.owner.token, body: { label: value } });

    const refused = await label("one-more");
    expectError(refused, 409, "CONFLICT", "label");
    expect(refused.body.error.details).toMatchObject({ reason: "too_many_labels", limit: 200 });
    expect(expectOk(await label("kept-7")).labels).toEqual(["kept-7"]);
    const list = expectOk(await call("GET", `/v1/organizations/${f.organizationId}/labels`, { token: f.owner.token }));
    expect(list).toHaveLength(200);
    expect(list.some((l: any) => l.label === "one-more")).toBe(false);
  });
});
