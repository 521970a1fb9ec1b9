import { describe, expect, it } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { testClock } from "../helpers/clock";
import {
  acceptInvitation,
  addMember,
  addQueue,
  createApiKey,
  createOrganization,
  createQueueFixture,
  registerUser,
} from "../helpers/fixtures";

// GET /v1/desks/{deskId}/console (issue 39, item 7): what a counter console shows of its desk in
// one read — the branch, the desk's queues and counts, the line in the desk's order, the held
// tickets and the caller's own ticket — guarded like the desk.

async function branch() {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking" });
  const f = await createQueueFixture(owner, org.id);
  const queueB = await addQueue(f, { name: "Accounts" });
  const desk = expectOk(
    await call("POST", `/v1/locations/${f.locationId}/desks`, {
      token: owner.token,
      body: { name: "Desk 1", displayName: "Guichet 1", queueIds: [f.queueId, queueB] },
    }),
    201,
  );
  const clerk = await addMember(owner, org.id, "operator", { firstName: "Awa", lastName: "Koné" });
  return { owner, clerk, organizationId: org.id, locationId: f.locationId, serviceId: f.serviceId, queueA: f.queueId, queueB, desk };
}

const walkIn = async (token: string, queueId: string, body: Record<string, unknown> = {}): Promise<any> =>
  expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token, body }), 201);

describe("GET /v1/desks/{deskId}/console", () => {
  it("answers the branch, the queues with their counts, the line in the desk's order, the held and the caller's ticket", async () => {
    const b = await branch();
    const owner = b.owner.token;
    const t0 = Date.parse("2026-03-20T09:00:00.000Z");
    testClock.set(t0);
    const a1 = await walkIn(owner, b.queueA, { visitorName: "Léa" });
    testClock.set(t0 + 60_000);
    const b1 = await walkIn(owner, b.queueB);
    const a2 = await walkIn(owner, b.queueA);
    const vip = expectOk(await call("POST", `/v1/queues/${b.queueB}/vip-ticket`, { token: owner, body: {} }), 201);
    const held = await walkIn(owner, b.queueB);

    expectOk(await call("POST", `/v1/desks/${b.desk.id}/open`, { token: b.clerk.token }));
    testClock.set(t0 + 120_000);
    // The clerk's call takes the VIP; the owner calls B's next and holds it.
    const mine = expectOk(await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token: b.clerk.token }));
    expect(mine.id).toBe(vip.id);
    const other = expectOk(await call("POST", `/v1/queues/${b.queueB}/call-next`, { token: owner, body: {} }));
    expect(other.id).toBe(b1.id);
    expectOk(await call("POST", `/v1/tickets/${other.id}/hold`, { token: owner, body: {} }));

    const view = expectOk(await call("GET", `/v1/desks/${b.desk.id}/console`, { token: b.clerk.token }));
    expect(view.at).toBe("2026-03-20T09:02:00.000Z");
    expect(view.desk).toMatchObject({ id: b.desk.id, displayName: "Guichet 1", status: "open", operatorId: b.clerk.id });
    expect(view.location).toMatchObject({ id: b.locationId, name: expect.any(String), timezone: expect.any(String) });
    expect(view.queues.map((q: any) => [q.id, q.name, q.letter, q.status, q.waitingCount, q.heldCount])).toEqual([
      [b.queueA, "Main queue", "A", "active", 2, 0],
      [b.queueB, "Accounts", "B", "active", 1, 1],
    ]);
    expect(view.queues[0].serviceId).toBe(b.serviceId);
    expect(view.queues[0].serviceName).toEqual(expect.any(String));
    // Across queues: each ticket's place in its queue, then the longest wait.
    expect(view.waiting.map((t: any) => t.id)).toEqual([a1.id, held.id, a2.id]);
    expect(view.waiting[0]).toMatchObject({ visitorName: "Léa", status: "waiting", kind: "walk_in", position: 1 });
    expect(view.held.map((t: any) => t.id)).toEqual([other.id]);
    expect(view.current).toMatchObject({ id: vip.id, status: "called", assignedToId: b.clerk.id, isPriority: true });

    // The owner, at the same desk's view, has no ticket of their own there.
    const ownerView = expectOk(await call("GET", `/v1/desks/${b.desk.id}/console`, { token: owner }));
    expect(ownerView.current).toBeNull();
    expect(ownerView.waiting).toHaveLength(3);
  });

  it("a serving ticket is the current one; a finished one is not", async () => {
    const b = await branch();
    await walkIn(b.owner.token, b.queueA);
    expectOk(await call("POST", `/v1/desks/${b.desk.id}/open`, { token: b.clerk.token }));
    const t = expectOk(await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token: b.clerk.token }));
    expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, { token: b.clerk.token }));
    let view = expectOk(await call("GET", `/v1/desks/${b.desk.id}/console`, { token: b.clerk.token }));
    expect(view.current).toMatchObject({ id: t.id, status: "serving" });
    expectOk(await call("POST", `/v1/tickets/${t.id}/complete`, { token: b.clerk.token, body: {} }));
    view = expectOk(await call("GET", `/v1/desks/${b.desk.id}/console`, { token: b.clerk.token }));
    expect(view.current).toBeNull();
    expect(view.waiting).toEqual([]);
  });

  it("is read by every role and a write:queues key; refused to read-only keys, strangers and no credential", async () => {
    const b = await branch();
    for (const role of ["admin", "manager", "operator"]) {
      const member = await addMember(b.owner, b.organizationId, role);
      expectOk(await call("GET", `/v1/desks/${b.desk.id}/console`, { token: member.token }));
    }
    const writeKey = await createApiKey(b.owner, b.organizationId, ["write:queues"]);
    expectOk(await call("GET", `/v1/desks/${b.desk.id}/console`, { apiKey: writeKey.key }));
    const readKey = await createApiKey(b.owner, b.organizationId, ["read:queues"]);
    const refused = await call("GET", `/v1/desks/${b.desk.id}/console`, { apiKey: readKey.key });
    expectError(refused, 403, "AUTHORIZATION_ERROR");
    expect(refused.body.error.message).toContain("write:queues");
    const widgetKey = await createApiKey(b.owner, b.organizationId, ["widget"]);
    expectError(await call("GET", `/v1/desks/${b.desk.id}/console`, { apiKey: widgetKey.key }), 403, "AUTHORIZATION_ERROR");

    const stranger = await registerUser();
    await createOrganization(stranger);
    expectError(await call("GET", `/v1/desks/${b.desk.id}/console`, { token: stranger.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/desks/${b.desk.id}/console`), 401, "AUTHENTICATION_ERROR");
    expectError(await call("GET", `/v1/desks/dsk_${unique("nope")}/console`, { token: b.owner.token }), 404, "NOT_FOUND");
  });

  it("a member scoped to another branch gets 404, one scoped to this branch reads it", async () => {
    const b = await branch();
    const other = expectOk(
      await call("POST", "/v1/locations", {
        token: b.owner.token,
        body: { organizationId: b.organizationId, name: "Lyon", address: "1 rue de Lyon", latitude: 45.76, longitude: 4.84 },
      }),
      201,
    );
    const scoped = async (locationId: string) => {
      const member = await registerUser();
      expectOk(
        await call("POST", `/v1/organizations/${b.organizationId}/members`, {
          token: b.owner.token,
          body: { email: member.email, role: "operator", locationIds: [locationId] },
        }),
        202,
      );
      await acceptInvitation(member, b.organizationId);
      return member;
    };
    const lyonClerk = await scoped(other.id);
    expectError(await call("GET", `/v1/desks/${b.desk.id}/console`, { token: lyonClerk.token }), 404, "NOT_FOUND");
    const hereClerk = await scoped(b.locationId);
    const view = expectOk(await call("GET", `/v1/desks/${b.desk.id}/console`, { token: hereClerk.token }));
    expect(view.location.id).toBe(b.locationId);
  });
});
