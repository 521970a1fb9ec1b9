import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { addMember, createOrganization, registerUser } from "../helpers/fixtures";
import { ownerWithOrganization, paySandboxCheckout } from "../helpers/billing";

// Issue 40: a console sign-in and a provider's plan change are in the organization's log.

interface Row {
  actor_type: string;
  actor_id: string | null;
  action: string;
  entity_id: string;
  changes: string;
  ip: string | null;
}

async function entries(organizationId: string, action: string): Promise<Row[]> {
  const rows = await env.DB.prepare(
    "SELECT actor_type, actor_id, action, entity_id, changes, ip FROM audit_events WHERE organization_id = ? AND action = ? ORDER BY rowid",
  )
    .bind(organizationId, action)
    .all<Row>();
  return rows.results;
}

describe("console sign-ins", () => {
  it("a password sign-in is recorded once in each organization the person works for, never with the session's token", async () => {
    const owner = await registerUser();
    const first = (await createOrganization(owner)).id as string;
    const second = (await createOrganization(owner)).id as string;
    const operator = await addMember(owner, first, "operator");
    const before = await entries(first, "session.signed_in");

    const res = await call("POST", "/v1/auth/login", {
      body: { email: operator.email, password: "correct horse battery" },
      headers: { "CF-Connecting-IP": "203.0.113.9" },
    });
    const token: string = expectOk(res).session.token;
    const after = await entries(first, "session.signed_in");
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)).toEqual({
      actor_type: "user",
      actor_id: operator.id,
      action: "session.signed_in",
      entity_id: operator.id,
      changes: JSON.stringify({ method: { before: null, after: "password" } }),
      ip: "203.0.113.9",
    });
    expect(JSON.stringify(after)).not.toContain(token);
    // The operator is not a member of the second organization: nothing there.
    expect((await entries(second, "session.signed_in")).filter((e) => e.actor_id === operator.id)).toEqual([]);

    // The owner works for both: one entry in each. It is listed at once (sealed before the answer).
    expectOk(await call("POST", "/v1/auth/login", { body: { email: owner.email, password: "correct horse battery" } }));
    for (const org of [first, second]) {
      expect((await entries(org, "session.signed_in")).filter((e) => e.actor_id === owner.id)).toHaveLength(1);
      const listed = expectOk(
        await call("GET", `/v1/organizations/${org}/audit-events?action=session.signed_in&actorId=${owner.id}`, { token: owner.token }),
      );
      expect(listed).toHaveLength(1);
    }
  });

  it("a refused sign-in and a customer's sign-in record nothing", async () => {
    const owner = await registerUser();
    const org = (await createOrganization(owner)).id as string;
    const count = (await entries(org, "session.signed_in")).length;
    expect((await call("POST", "/v1/auth/login", { body: { email: owner.email, password: "wrong password" } })).status).toBe(401);
    expect(await entries(org, "session.signed_in")).toHaveLength(count);
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await call("POST", "/v1/auth/login", { body: { email: customer.email, password: "correct horse battery" } }));
    const theirs = await env.DB.prepare("SELECT count(*) AS n FROM audit_events WHERE actor_id = ? AND action = 'session.signed_in'")
      .bind(customer.id)
      .first<{ n: number }>();
    expect(theirs!.n).toBe(0);
  });
});

describe("a provider's plan change", () => {
  it("the payment that starts a plan is recorded by the system with the plan before and after and the provider's event", async () => {
    const { owner, org } = await ownerWithOrganization();
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    // The request for the upgrade is the owner's; it changes no plan yet.
    const byOwner = await entries(org.id, "subscription.plan_changed");
    await paySandboxCheckout(pending.checkoutUrl);
    const all = await entries(org.id, "subscription.plan_changed");
    expect(all).toHaveLength(byOwner.length + 1);
    const byProvider = all.at(-1)!;
    expect(byProvider).toMatchObject({ actor_type: "system", actor_id: null, entity_id: org.id });
    const changes = JSON.parse(byProvider.changes);
    expect(changes.plan).toEqual({ before: "starter", after: "pro" });
    expect(changes.providerEvent.after).toMatch(/^sandbox:/);
  });
});
