import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { render } from "../../src/domain/notification-templates";
import { call, expectError, expectOk, unique, type ApiResponse } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { addMember, createApiKey, createOrganization, createQueueFixture, queueFixture, registerUser, walkIn } from "../helpers/fixtures";
import { sweep } from "../helpers/cron";

// The operator's verbs of issue #19 beyond recall and return (docs/desks.md): hold and resume,
// outcomes and notes at completion, and the owner's step back ("let others pass").

type F = { owner: { token: string; id?: string }; queueId: string; organizationId: string; serviceId: string };

async function calledTicket(f: F, counter = "Guichet 2"): Promise<any> {
  await walkIn(f.owner, f.queueId);
  return expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { counter } }));
}

function post(path: string, token: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse> {
  return call("POST", path, { token, body, headers });
}

/** The events the room's outbox sends while `act` runs (and the outbox drains). */
async function eventsOf(queueId: string, act: () => Promise<void>): Promise<DomainEventMessage[]> {
  await settle(queueId);
  const sent: DomainEventMessage[] = [];
  const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) sent.push(m.body as DomainEventMessage);
    return undefined as never;
  });
  try {
    await act();
    await settle(queueId);
  } finally {
    spy.mockRestore();
  }
  return sent;
}

/** An Idempotency-Key sent twice: the second answer is the first's, replayed, and nothing ran again. */
async function replays(path: string, token: string, body?: unknown, status = 200): Promise<any> {
  const key = unique("idem-");
  const first = await post(path, token, body, { "Idempotency-Key": key });
  const data = expectOk(first, status);
  const again = await post(path, token, body, { "Idempotency-Key": key });
  expect(again.status).toBe(status);
  expect(again.headers.get("Idempotent-Replayed")).toBe("true");
  expect(again.body).toEqual(first.body);
  return data;
}

describe("hold and resume", () => {
  it("holds a called ticket: out of the line, never expired, off the board's called list; resume calls it again at the same desk", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "banking" });
    const f = await createQueueFixture(owner, org.id);
    const desk = expectOk(
      await call("POST", `/v1/locations/${f.locationId}/desks`, { token: owner.token, body: { name: "Guichet 3", queueIds: [f.queueId] } }),
      201,
    );
    expectOk(await call("POST", `/v1/desks/${desk.id}/open`, { token: owner.token }));
    testClock.set("2026-03-20T10:00:00.000Z");
    await walkIn(owner, f.queueId);
    const next = await walkIn(owner, f.queueId);
    const called = expectOk(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: owner.token }));
    expect(called).toMatchObject({ status: "called", deskId: desk.id, counter: "Guichet 3" });

    let held: any;
    const heldEvents = await eventsOf(f.queueId, async () => {
      held = expectOk(await post(`/v1/tickets/${called.id}/hold`, owner.token, { reason: "Fetching the passport" }));
    });
    expect(held).toMatchObject({
      status: "held",
      holdReason: "Fetching the passport",
      heldAt: "2026-03-20T10:00:00.000Z",
      assignedToId: called.assignedToId,
      deskId: desk.id,
      counter: "Guichet 3",
      position: null,
    });
    expect(heldEvents.map((e) => e.type)).toEqual(["ticket.held"]);
    expect(heldEvents[0]!.data).toMatchObject({ heldFrom: "called", reason: "Fetching the passport", status: "held" });

    // The queue's ticket list shows it (status filter too); the board does not call it any more.
    const list = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=held`, { token: owner.token }));
    expect(list.map((t: any) => t.id)).toEqual([called.id]);
    const board = expectOk(await call("GET", `/v1/widget/organization/${org.id}/display-board`, { token: owner.token }));
    expect(board.queues.find((q: any) => q.queueId === f.queueId).called).toEqual([]);

    // Far past the no-show timeout: the sweep expires called tickets only.
    testClock.advance(30 * 60_000);
    await sweep(Date.parse("2026-03-20T10:30:00.000Z"));
    expect(expectOk(await call("GET", `/v1/tickets/${called.id}`, { token: owner.token })).status).toBe("held");

    // Call-next meanwhile takes the next ticket; the held one stays held.
    expect(expectOk(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: owner.token })).id).toBe(next.id);
    expect(expectOk(await call("GET", `/v1/tickets/${called.id}`, { token: owner.token })).status).toBe("held");

    testClock.advance(60_000);
    let resumed: any;
    const resumedEvents = await eventsOf(f.queueId, async () => {
      resumed = expectOk(await post(`/v1/tickets/${called.id}/resume`, owner.token));
    });
    expect(resumed).toMatchObject({
      status: "called",
      calledAt: "2026-03-20T10:31:00.000Z",
      assignedToId: called.assignedToId,
      deskId: desk.id,
      counter: "Guichet 3",
      heldAt: null,
      holdReason: null,
      recallCount: 0,
    });
    expect(resumedEvents.map((e) => e.type)).toEqual(["ticket.resumed"]);
    expect(resumedEvents[0]!.data).toMatchObject({ resumedTo: "called", heldForSeconds: 1860, counter: "Guichet 3" });
    // Back on the board as a new announcement.
    const after = expectOk(await call("GET", `/v1/widget/organization/${org.id}/display-board`, { token: owner.token }));
    const codes = after.queues.find((q: any) => q.queueId === f.queueId).called.map((c: any) => c.displayCode);
    expect(codes[0]).toBe(called.displayCode);
    // The no-show timeout starts over from the resume.
    await sweep(Date.parse("2026-03-20T10:35:00.000Z"));
    expect(expectOk(await call("GET", `/v1/tickets/${called.id}`, { token: owner.token })).status).toBe("called");
  });

  it("holds a serving ticket and resumes it to serving; a call-next meanwhile does not complete it", async () => {
    const f = await queueFixture("pro");
    const t = await calledTicket(f);
    expectOk(await post(`/v1/tickets/${t.id}/serve`, f.owner.token));
    const held = expectOk(await post(`/v1/tickets/${t.id}/hold`, f.owner.token));
    expect(held).toMatchObject({ status: "held", holdReason: null, servingAt: expect.any(String) });
    await walkIn(f.owner, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    const resumed = expectOk(await post(`/v1/tickets/${t.id}/resume`, f.owner.token));
    expect(resumed).toMatchObject({ status: "serving", servingAt: held.servingAt, calledAt: t.calledAt, counter: "Guichet 2" });
    expect(expectOk(await post(`/v1/tickets/${t.id}/complete`, f.owner.token)).status).toBe("served");
  });

  it("refuses the wrong state (409 INVALID_STATE with allowed), a key without QUEUE_OPERATE (403), another organization (404)", async () => {
    const f = await queueFixture("pro");
    const waiting = await walkIn(f.owner, f.queueId);
    const hold = await post(`/v1/tickets/${waiting.id}/hold`, f.owner.token);
    expectError(hold, 409, "INVALID_STATE");
    expect(hold.body.error.details).toEqual({ status: "waiting", allowed: ["called", "serving"] });
    const resume = await post(`/v1/tickets/${waiting.id}/resume`, f.owner.token);
    expectError(resume, 409, "INVALID_STATE");
    expect(resume.body.error.details).toEqual({ status: "waiting", allowed: ["held"] });

    const called = await calledTicket(f);
    const readOnly = await createApiKey(f.owner as any, f.organizationId, ["read"]);
    expectError(await call("POST", `/v1/tickets/${called.id}/hold`, { apiKey: readOnly.key }), 403, "AUTHORIZATION_ERROR");
    const operator = await addMember(f.owner as any, f.organizationId, "operator");
    expectOk(await post(`/v1/tickets/${called.id}/hold`, operator.token));
    expectError(await call("POST", `/v1/tickets/${called.id}/resume`, { apiKey: readOnly.key }), 403, "AUTHORIZATION_ERROR");
    const other = await queueFixture("pro");
    expectError(await post(`/v1/tickets/${called.id}/resume`, other.owner.token), 404, "NOT_FOUND");
    expectError(await post(`/v1/tickets/${called.id}/hold`, other.owner.token, {}), 404, "NOT_FOUND");
    // A held ticket cannot be held again, nor completed, skipped or cancelled before it is resumed.
    const again = await post(`/v1/tickets/${called.id}/hold`, f.owner.token);
    expectError(again, 409, "INVALID_STATE");
    expect(again.body.error.details).toEqual({ status: "held", allowed: ["called", "serving"] });
    expectError(await post(`/v1/tickets/${called.id}/complete`, f.owner.token), 409, "INVALID_STATE");
    expectError(await post(`/v1/tickets/${called.id}/cancel`, f.owner.token), 409, "INVALID_STATE");
    expectError(await post(`/v1/tickets/${called.id}/hold`, f.owner.token, { reason: "x".repeat(201) }), 400, "VALIDATION_ERROR", "reason");
  });

  it("replays hold and resume for the same Idempotency-Key (one change each)", async () => {
    const f = await queueFixture("pro");
    const t = await calledTicket(f);
    const events = await eventsOf(f.queueId, async () => {
      expect((await replays(`/v1/tickets/${t.id}/hold`, f.owner.token, { reason: "Back in 5" })).status).toBe("held");
      expect((await replays(`/v1/tickets/${t.id}/resume`, f.owner.token)).status).toBe("called");
    });
    expect(events.map((e) => e.type)).toEqual(["ticket.held", "ticket.resumed"]);
  });

  it("shows the visitor a held ticket as on hold: the token stays valid, and resume brings the turn back", async () => {
    const f = await queueFixture("pro");
    const widgetKey = (await createApiKey(f.owner as any, f.organizationId, ["widget"])).key;
    const joined = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: widgetKey, body: {} }), 201);
    const headers = { "X-Ticket-Token": joined.ticketToken };
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { counter: "G4" } }));
    expectOk(await post(`/v1/tickets/${joined.id}/hold`, f.owner.token));
    const seen = expectOk(await call("GET", `/v1/widget/tickets/${joined.id}`, { headers }));
    expect(seen).toMatchObject({ status: "held", position: null, counter: null });
    expectOk(await post(`/v1/tickets/${joined.id}/resume`, f.owner.token));
    expect(expectOk(await call("GET", `/v1/widget/tickets/${joined.id}`, { headers }))).toMatchObject({ status: "called", counter: "G4" });
    expect(render("ticket.held", "en", { code: "A-042", queue: "Main" }).body).toBe(
      "Ticket A-042 is on hold: the desk will call you back (Main).",
    );
    expect(render("ticket.resumed", "en", { code: "A-042", counter: "G4", queue: "Main" }).body).toBe(
      "Ticket A-042: please come back now to G4 (Main).",
    );
  });

  it("archiving the queue cancels a held ticket; clearing it leaves the ticket with its operator", async () => {
    const f = await queueFixture("pro");
    const t = await calledTicket(f);
    expectOk(await post(`/v1/tickets/${t.id}/hold`, f.owner.token));
    expectOk(await post(`/v1/queues/${f.queueId}/clear`, f.owner.token));
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("held");
    expectOk(await post(`/v1/queues/${f.queueId}/archive`, f.owner.token));
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("cancelled");
  });
});

describe("outcomes and notes at completion", () => {
  it("defines a service's outcomes (create, list, duplicate 409, delete) with SERVICE_MANAGE; operators may list them", async () => {
    const f = await queueFixture("pro");
    const base = `/v1/services/${f.serviceId}/outcomes`;
    const created = expectOk(await post(base, f.owner.token, { code: "account_opened", label: "Account opened" }), 201);
    expect(created).toMatchObject({ serviceId: f.serviceId, code: "account_opened", label: "Account opened" });
    // Replayed by its Idempotency-Key: the same answer, no duplicate (which would be 409).
    await replays(base, f.owner.token, { code: "second_visit", label: "Needs a second visit" }, 201);
    expectError(await post(base, f.owner.token, { code: "account_opened", label: "Again" }), 409, "CONFLICT", "code");
    expectError(await post(base, f.owner.token, { code: "Not A Code", label: "x" }), 400, "VALIDATION_ERROR", "code");
    expectError(await post(base, f.owner.token, { code: "ok", label: "" }), 400, "VALIDATION_ERROR", "label");
    const operator = await addMember(f.owner as any, f.organizationId, "operator");
    const listed = expectOk(await call("GET", base, { token: operator.token }));
    expect(listed.map((o: any) => o.code)).toEqual(["account_opened", "second_visit"]);
    expectError(await post(base, operator.token, { code: "nope", label: "Nope" }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("DELETE", `${base}/second_visit`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
    const other = await queueFixture("pro");
    expectError(await call("GET", base, { token: other.owner.token }), 404, "NOT_FOUND");
    expectError(await post(base, other.owner.token, { code: "x", label: "X" }), 404, "NOT_FOUND");
    expect(expectOk(await call("DELETE", `${base}/second_visit`, { token: f.owner.token }))).toEqual({
      code: "second_visit",
      deleted: true,
    });
    expectError(await call("DELETE", `${base}/second_visit`, { token: f.owner.token }), 404, "NOT_FOUND");
    expect(expectOk(await call("GET", base, { token: f.owner.token })).map((o: any) => o.code)).toEqual(["account_opened"]);
  });

  it("records the outcome and note on the ticket, its D1 record, the ticket.served event and the CSV export", async () => {
    const f = await queueFixture("pro");
    expectOk(await post(`/v1/services/${f.serviceId}/outcomes`, f.owner.token, { code: "account_opened", label: "Account opened" }), 201);
    testClock.set("2026-05-10T08:00:00.000Z");
    const t = await calledTicket(f);
    expectOk(await post(`/v1/tickets/${t.id}/serve`, f.owner.token));
    let done: any;
    const events = await eventsOf(f.queueId, async () => {
      done = expectOk(
        await post(`/v1/tickets/${t.id}/complete`, f.owner.token, { outcome: "account_opened", note: "  Brings the form Monday " }),
      );
    });
    expect(done).toMatchObject({ status: "served", outcome: "account_opened", note: "Brings the form Monday" });
    const served = events.find((e) => e.type === "ticket.served")!;
    expect(served.data).toMatchObject({ outcome: "account_opened", outcomeLabel: "Account opened", note: "Brings the form Monday" });
    const row = await env.DB.prepare("SELECT outcome, note FROM tickets WHERE id = ?").bind(t.id).first();
    expect(row).toEqual({ outcome: "account_opened", note: "Brings the form Monday" });
    const csv = await call("GET", `/v1/analytics/export.csv?from=2026-05-10&to=2026-05-11&queueId=${f.queueId}`, { token: f.owner.token });
    expect(csv.status, String(csv.body)).toBe(200);
    const lines = String(csv.body)
      .replace(/^\uFEFF/, "")
      .trim()
      .split(/\r?\n/);
    const header = lines[0]!.split(",");
    const line = lines.find((l) => l.startsWith(t.id))!.split(",");
    expect(line[header.indexOf("serviceOutcome")]).toBe("account_opened");
    // Completed without a body, a ticket has no outcome and the event none either.
    const plain = await calledTicket(f);
    expectOk(await post(`/v1/tickets/${plain.id}/serve`, f.owner.token));
    expect(expectOk(await post(`/v1/tickets/${plain.id}/complete`, f.owner.token))).toMatchObject({ outcome: null, note: null });
  });

  it("refuses an outcome the service does not have (400, field outcome), a note over 500, the wrong state, role and organization", async () => {
    const f = await queueFixture("pro");
    expectOk(await post(`/v1/services/${f.serviceId}/outcomes`, f.owner.token, { code: "done", label: "Done" }), 201);
    const other = await queueFixture("pro");
    // Another service's outcome is not this one's.
    expectOk(await post(`/v1/services/${other.serviceId}/outcomes`, other.owner.token, { code: "elsewhere", label: "Elsewhere" }), 201);
    const t = await calledTicket(f);
    const wrongState = await post(`/v1/tickets/${t.id}/complete`, f.owner.token, { outcome: "done" });
    expectError(wrongState, 409, "INVALID_STATE");
    expect(wrongState.body.error.details).toEqual({ status: "called", allowed: ["serving"] });
    expectOk(await post(`/v1/tickets/${t.id}/serve`, f.owner.token));
    expectError(await post(`/v1/tickets/${t.id}/complete`, f.owner.token, { outcome: "elsewhere" }), 400, "VALIDATION_ERROR", "outcome");
    expectError(await post(`/v1/tickets/${t.id}/complete`, f.owner.token, { note: "n".repeat(501) }), 400, "VALIDATION_ERROR", "note");
    expectError(await post(`/v1/tickets/${t.id}/complete`, f.owner.token, { outcome: "done", extra: 1 }), 400, "VALIDATION_ERROR");
    const readOnly = await createApiKey(f.owner as any, f.organizationId, ["read"]);
    expectError(
      await call("POST", `/v1/tickets/${t.id}/complete`, { apiKey: readOnly.key, body: { outcome: "done" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(await post(`/v1/tickets/${t.id}/complete`, other.owner.token, { outcome: "done" }), 404, "NOT_FOUND");
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("serving");
    const done = await replays(`/v1/tickets/${t.id}/complete`, f.owner.token, { outcome: "done", note: "n".repeat(500) });
    expect(done).toMatchObject({ status: "served", outcome: "done" });
  });
});

describe("step back (let others pass)", () => {
  it("moves the owner's waiting ticket behind N others, once; a second time is 409; fewer behind moves it to the back", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser();
    const mine = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    const others = [await walkIn(f.owner, f.queueId), await walkIn(f.owner, f.queueId), await walkIn(f.owner, f.queueId)] as const;
    let moved: any;
    const events = await eventsOf(f.queueId, async () => {
      moved = expectOk(await post(`/v1/tickets/${mine.id}/step-back`, customer.token, { places: 2 }));
    });
    expect(moved).toMatchObject({ id: mine.id, status: "waiting", position: 3, steppedBackPlaces: 2 });
    expect(events.map((e) => e.type)).toContain("ticket.stepped_back");
    expect(events.find((e) => e.type === "ticket.stepped_back")!.data).toMatchObject({ places: 2, requestedPlaces: 2, position: 3 });
    const line = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting`, { token: f.owner.token }));
    expect(line.map((t: any) => t.id)).toEqual([others[0].id, others[1].id, mine.id, others[2].id]);
    const twice = await post(`/v1/tickets/${mine.id}/step-back`, customer.token, { places: 1 });
    expectError(twice, 409, "CONFLICT");
    expect(twice.body.error.details).toMatchObject({ reason: "already_stepped_back", steppedBackPlaces: 2 });

    // Fewer behind than asked: to the back; nobody behind: 409 (and the one step is not spent).
    const last = others[2];
    const nobody = await post(`/v1/tickets/${last.id}/step-back`, f.owner.token, { places: 1 });
    expect(nobody.status).toBe(409);
    expect(nobody.body.error.details).toMatchObject({ reason: "nobody_behind" });
    const first = expectOk(await post(`/v1/tickets/${others[0].id}/step-back`, f.owner.token, { places: 10 }));
    expect(first).toMatchObject({ position: 4, steppedBackPlaces: 3 });
    // Call-next follows the new order.
    const calls = [];
    for (let i = 0; i < 4; i++)
      calls.push(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} })).id);
    expect(calls).toEqual([others[1].id, mine.id, others[2].id, others[0].id]);
  });

  it("refuses bounds (400, field places), the wrong state (409 allowed), someone else's ticket (404/403), and replays by Idempotency-Key", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser();
    const mine = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    await walkIn(f.owner, f.queueId);
    await walkIn(f.owner, f.queueId);
    for (const places of [0, 11, 1.5, "2"]) {
      expectError(await post(`/v1/tickets/${mine.id}/step-back`, customer.token, { places }), 400, "VALIDATION_ERROR", "places");
    }
    // Another customer (not a member): the ticket of a queue they do not operate is not theirs.
    const stranger = await registerUser();
    expectError(await post(`/v1/tickets/${mine.id}/step-back`, stranger.token, { places: 1 }), 404, "NOT_FOUND");
    const readOnly = await createApiKey(f.owner as any, f.organizationId, ["read"]);
    expectError(
      await call("POST", `/v1/tickets/${mine.id}/step-back`, { apiKey: readOnly.key, body: { places: 1 } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    const other = await queueFixture("pro");
    expectError(await post(`/v1/tickets/${mine.id}/step-back`, other.owner.token, { places: 1 }), 404, "NOT_FOUND");
    const stepped = await replays(`/v1/tickets/${mine.id}/step-back`, customer.token, { places: 1 });
    expect(stepped).toMatchObject({ position: 2, steppedBackPlaces: 1 });
    // Called: not in the line any more.
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    const res = await post(`/v1/tickets/${called.id}/step-back`, f.owner.token, { places: 1 });
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details).toEqual({ status: "called", allowed: ["waiting"] });
  });

  it("lets the visitor step back with the ticket's token on the widget route (404 without it)", async () => {
    const f = await queueFixture("pro");
    const widgetKey = (await createApiKey(f.owner as any, f.organizationId, ["widget"])).key;
    const joined = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: widgetKey, body: {} }), 201);
    await walkIn(f.owner, f.queueId);
    const path = `/v1/widget/tickets/${joined.id}/step-back`;
    expectError(await call("POST", path, { body: { places: 1 } }), 404, "NOT_FOUND");
    expectError(await call("POST", path, { body: { places: 1 }, headers: { "X-Ticket-Token": "A".repeat(43) } }), 404, "NOT_FOUND");
    const headers = { "X-Ticket-Token": joined.ticketToken };
    const seen = expectOk(await call("POST", path, { body: { places: 3 }, headers }));
    expect(seen).toMatchObject({ ticketId: joined.id, status: "waiting", position: 2 });
    expectError(await call("POST", path, { body: { places: 1 }, headers }), 409, "CONFLICT");
  });

  it("is exact against concurrent call-nexts: the room orders them, no ticket is lost or called twice", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser();
    for (let round = 0; round < 5; round++) {
      const mine = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
      const behind = [await walkIn(f.owner, f.queueId), await walkIn(f.owner, f.queueId), await walkIn(f.owner, f.queueId)] as const;
      const [step, ...calls] = await Promise.all([
        post(`/v1/tickets/${mine.id}/step-back`, customer.token, { places: 2 }),
        call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }),
        call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }),
      ]);
      const calledIds = calls.map((r) => expectOk(r).id);
      expect(new Set(calledIds).size).toBe(2);
      if (step.status === 200) {
        // The step ran before both calls (after one, the ticket at the front would be called):
        // the calls took the two it let pass.
        expect(new Set(calledIds)).toEqual(new Set([behind[0].id, behind[1].id]));
        expect(expectOk(step).steppedBackPlaces).toBe(2);
      } else {
        // A call came first and took it from the front: the room refused the step.
        expectError(step, 409, "INVALID_STATE");
        expect(calledIds).toContain(mine.id);
      }
      // Drain the round: whatever is left is called exactly once, in line order.
      const rest: string[] = [];
      for (;;) {
        const r = await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} });
        if (r.status === 409) break;
        rest.push(expectOk(r).id);
      }
      const all = [...calledIds, ...rest];
      expect(new Set(all).size).toBe(4);
      expect(new Set(all)).toEqual(new Set([mine.id, ...behind.map((t) => t.id)]));
    }
    expect(render("ticket.stepped_back", "en", { code: "A-042", position: 3, queue: "Main" }).body).toBe(
      "Ticket A-042: you are now at position 3 in line for Main.",
    );
  });
});
