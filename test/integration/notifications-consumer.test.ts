import { env } from "cloudflare:test";
import { exportPKCS8, exportSPKI, generateKeyPair, importSPKI, jwtVerify } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { call, expectOk, unique } from "../helpers/api";
import { addMember, createApiKey, type Fixture, queueFixture, registerUser, type TestUser } from "../helpers/fixtures";
import { capture, deliveriesOf, eventsOf, feed, feedEvents, inbox, smsUsed, type Captured } from "../helpers/notifications";
import { expectLogs } from "../helpers/console";

// The EVENTS consumer with the events the rooms really produced (CONTRACT §7).

let captured: Captured;
afterEach(() => {
  captured?.restore();
  vi.restoreAllMocks();
});

const ids = (events: DomainEventMessage[]) => events.map((e) => e.id);

async function customer(overrides: Record<string, unknown> = {}): Promise<TestUser> {
  return registerUser({ accountType: "customer", ...overrides });
}

async function join(f: Fixture, user: TestUser, body: Record<string, unknown> = {}) {
  return expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: user.token, body }), 201);
}

async function walkIns(f: Fixture, n: number) {
  for (let i = 0; i < n; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
}

async function callNext(f: Fixture) {
  return expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { counter: "Guichet 2" } }));
}

async function registerDevice(user: TestUser, token = unique("fcm")) {
  expectOk(await call("POST", "/v1/push/register", { token: user.token, body: { platform: "android", fcmToken: token } }), 201);
  return token;
}

describe("domain events → notifications", () => {
  it("a customer's join gives ticket.created with the display code, queue name, position and wait", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    await walkIns(f, 2);
    const alice = await customer();
    const t = await join(f, alice);
    const result = await feedEvents(await eventsOf(captured, f.queueId));
    expect(result.explicitAcks.length).toBeGreaterThan(0);
    const mine = await inbox(alice.id);
    expect(mine.map((n) => n.type)).toEqual(["ticket.created"]);
    expect(mine[0]!.title).toBe(`Ticket ${t.displayCode}`);
    expect(mine[0]!.body).toBe(`You are in line for Main line, position 3, estimated wait ${t.estimatedWaitMinutes} min.`);
    // The walk-ins are the operator's own tickets (ghost mode): nothing for the owner.
    expect(await inbox(f.owner.id)).toEqual([]);
  });

  it("reaching 3 ahead gives one ticket.almost_called, never twice even when the batch is redelivered", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    await walkIns(f, 4);
    const alice = await customer();
    await registerDevice(alice);
    const t = await join(f, alice);
    expect(t.position).toBe(5);
    await feedEvents(await eventsOf(captured, f.queueId));
    expect((await inbox(alice.id)).map((n) => n.type)).toEqual(["ticket.created"]);

    await callNext(f);
    const events = await eventsOf(captured, f.queueId);
    expect(events.filter((e) => e.type === "ticket.almost_called").map((e) => e.ticketId)).toEqual([t.id]);
    await feedEvents(events);
    await feedEvents(events); // at-least-once: the same batch again
    await feedEvents([...events].reverse());
    const almost = (await inbox(alice.id)).filter((n) => n.type === "ticket.almost_called");
    expect(almost).toHaveLength(1);
    expect(almost[0]!.body).toBe(`Ticket ${t.displayCode}: 3 people ahead of you for Main line.`);
    const rows = await deliveriesOf(ids(events));
    expect(rows.map((r) => [r.type, r.channel, r.status])).toEqual([
      ["ticket.almost_called", "in_app", "sent"],
      ["ticket.almost_called", "push", "sent"],
    ]);
    // A later move does not announce it again.
    await callNext(f);
    await feedEvents(await eventsOf(captured, f.queueId));
    expect((await inbox(alice.id)).filter((n) => n.type === "ticket.almost_called")).toHaveLength(1);
  });

  it("a call gives ticket.called in French to a French user", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const amelie = await customer({ language: "fr" });
    const t = await join(f, amelie);
    await callNext(f);
    await feedEvents(await eventsOf(captured, f.queueId));
    const called = (await inbox(amelie.id)).find((n) => n.type === "ticket.called");
    expect(called).toMatchObject({
      title: "C'est votre tour",
      body: `Ticket ${t.displayCode} : présentez-vous maintenant au Guichet 2 (Main line).`,
    });
    const created = (await inbox(amelie.id)).find((n) => n.type === "ticket.created");
    expect(created?.body).toMatch(/^Vous êtes en attente pour Main line, position 1/);
  });

  it("served gives ticket.served, then review.request", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const alice = await customer();
    const t = await join(f, alice);
    await callNext(f);
    await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token });
    await call("POST", `/v1/tickets/${t.id}/complete`, { token: f.owner.token });
    const events = await eventsOf(captured, f.queueId);
    await feedEvents(events);
    const rows = await deliveriesOf(ids(events));
    expect(rows.map((r) => r.type)).toEqual(["ticket.created", "ticket.called", "ticket.served", "review.request"]);
    const texts = Object.fromEntries((await inbox(alice.id)).map((n) => [n.type, n.title]));
    expect(texts).toMatchObject({ "ticket.served": "Thank you for your visit", "review.request": "How did we do?" });
  });

  it("a ghost ticket's whole lifecycle gives no notification on any channel and no review request", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    await registerDevice(f.owner);
    const vip = expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { token: f.owner.token }), 201);
    const walkIn = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    await callNext(f);
    await call("POST", `/v1/tickets/${vip.id}/serve`, { token: f.owner.token });
    await call("POST", `/v1/tickets/${vip.id}/complete`, { token: f.owner.token });
    await callNext(f);
    await call("POST", `/v1/tickets/${walkIn.id}/skip-absent`, { token: f.owner.token, body: { reason: "absent" } });
    const events = await eventsOf(captured, f.queueId);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["ticket.created", "ticket.called", "ticket.served"]));
    expect(events.some((e) => e.type === "review.request")).toBe(false);
    expect(events.every((e) => e.data.isGhostMode === true)).toBe(true);
    await feedEvents(events);
    expect(await deliveriesOf(ids(events))).toEqual([]);
    expect(await inbox(f.owner.id)).toEqual([]);
  });

  it("ticketReminders false silences ticket.almost_called, not the call", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    await walkIns(f, 4);
    const bob = await customer();
    expectOk(await call("PATCH", "/v1/notifications/preferences", { token: bob.token, body: { ticketReminders: false } }));
    await join(f, bob);
    for (let i = 0; i < 5; i++) await callNext(f);
    const events = await eventsOf(captured, f.queueId);
    expect(events.some((e) => e.type === "ticket.almost_called" && e.data.userId === bob.id)).toBe(true);
    await feedEvents(events);
    expect((await inbox(bob.id)).map((n) => n.type)).toEqual(["ticket.created", "ticket.called"]);
  });

  it("SMS goes only on pro, only with the preference on, and is counted in the month's usage", async () => {
    captured = capture();
    const starter = await queueFixture("starter");
    const pro = await queueFixture("pro");
    const alice = await customer();
    const quiet = await customer();
    expectOk(await call("PATCH", "/v1/notifications/preferences", { token: quiet.token, body: { smsNotifications: false } }));
    await join(starter, alice, { phone: "+33612345678" });
    await join(pro, alice, { phone: "+33612345678" });
    await join(pro, quiet, { phone: "+33611111111" });
    const key = await createApiKey(pro.owner, pro.organizationId, ["write:queues"]);
    expectOk(
      await call("POST", `/v1/widget/queue/${pro.queueId}/join`, {
        apiKey: key.key,
        body: { visitorName: "Awa", phone: "+2250700000000" },
      }),
      201,
    );
    const events = [...(await eventsOf(captured, starter.queueId)), ...(await eventsOf(captured, pro.queueId))];
    await feedEvents(events);
    const sms = (await deliveriesOf(ids(events))).filter((r) => r.channel === "sms");
    expect(sms.map((r) => [r.organization_id, r.recipient, r.provider, r.status])).toEqual([
      [pro.organizationId, "+33612345678", "outbox", "sent"],
      [pro.organizationId, "+2250700000000", "outbox", "sent"],
    ]);
    expect(await smsUsed(starter.organizationId)).toBe(0);
    expect(await smsUsed(pro.organizationId)).toBe(2);
    await feedEvents(events);
    expect(await smsUsed(pro.organizationId)).toBe(2);
  });

  it("member.joined and queue.status_changed go to the organization's members, not to the new member", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const newcomer = await addMember(f.owner, f.organizationId, "operator");
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "paused" } }));
    const events = await eventsOf(captured, f.queueId);
    await feedEvents(events);
    expect((await inbox(f.owner.id)).map((n) => n.type).sort()).toEqual(["member.joined", "queue.status_changed"]);
    // The newcomer's own invitation is in their inbox; the organization's news of their joining is not.
    expect((await inbox(newcomer.id)).map((n) => n.type).sort()).toEqual(["member.invited", "queue.status_changed"]);
  });
});

describe("FCM delivery", () => {
  async function serviceAccount() {
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    const email = `${unique("svc")}@proj.iam.gserviceaccount.com`;
    const json = JSON.stringify({
      client_email: email,
      private_key: await exportPKCS8(privateKey),
      project_id: "proj-1",
      token_uri: "https://oauth.test/token",
    });
    return { json, email, publicKey: await importSPKI(await exportSPKI(publicKey), "RS256") };
  }

  type Answer = { status: number; body: unknown };
  function fakeGoogle(send: () => Answer) {
    const calls: { url: string; init: RequestInit }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      calls.push({ url, init: init ?? {} });
      if (url === "https://oauth.test/token")
        return Response.json({ access_token: "ya29.test-token", expires_in: 3600, token_type: "Bearer" });
      if (url.startsWith("https://fcm.test/")) {
        const a = send();
        return Response.json(a.body, { status: a.status });
      }
      return new Response("unexpected", { status: 599 });
    });
    return calls;
  }

  async function calledCustomer() {
    captured = capture();
    const f = await queueFixture("pro");
    const alice = await customer();
    const token = await registerDevice(alice);
    const t = await join(f, alice);
    await eventsOf(captured, f.queueId); // the join is not under test here
    await callNext(f);
    return { f, alice, token, t, events: await eventsOf(captured, f.queueId) };
  }

  it("signs an RS256 JWT for the service account and sends the right message", async () => {
    const account = await serviceAccount();
    const { token, t, events } = await calledCustomer();
    const calls = fakeGoogle(() => ({ status: 200, body: { name: "projects/proj-1/messages/1" } }));
    await feedEvents(events, { FCM_SERVICE_ACCOUNT: account.json, FCM_BASE_URL: "https://fcm.test" });

    const tokenCall = calls.find((c) => c.url === "https://oauth.test/token")!;
    const form = new URLSearchParams(String(tokenCall.init.body));
    expect(form.get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer");
    const { payload, protectedHeader } = await jwtVerify(form.get("assertion")!, account.publicKey, {
      issuer: account.email,
      audience: "https://oauth.test/token",
    });
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload.scope).toBe("https://www.googleapis.com/auth/firebase.messaging");
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(3600);

    const sends = calls.filter((c) => c.url === "https://fcm.test/v1/projects/proj-1/messages:send");
    expect(sends).toHaveLength(1);
    expect(new Headers(sends[0]!.init.headers).get("Authorization")).toBe("Bearer ya29.test-token");
    const body = JSON.parse(String(sends[0]!.init.body));
    expect(body).toEqual({
      message: {
        token,
        notification: { title: "It's your turn", body: `Ticket ${t.displayCode}: please come forward now to Guichet 2 (Main line).` },
        data: {
          type: "ticket.called",
          eventId: expect.stringMatching(/^evt_/),
          ticketId: t.id,
          queueId: t.queueId,
          displayCode: t.displayCode,
        },
      },
    });
    for (const v of Object.values(body.message.data)) expect(typeof v).toBe("string");
    const push = (await deliveriesOf(ids(events))).find((r) => r.channel === "push");
    expect(push).toMatchObject({ provider: "fcm", status: "sent", attempts: 1 });
  });

  it("reuses the access token until near expiry", async () => {
    const account = await serviceAccount();
    const { f, t, events } = await calledCustomer();
    const calls = fakeGoogle(() => ({ status: 200, body: { name: "m" } }));
    const over = { FCM_SERVICE_ACCOUNT: account.json, FCM_BASE_URL: "https://fcm.test" };
    await feedEvents(events, over);
    await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token });
    await call("POST", `/v1/tickets/${t.id}/complete`, { token: f.owner.token });
    await feedEvents(await eventsOf(captured, f.queueId), over);
    expect(calls.filter((c) => c.url === "https://oauth.test/token")).toHaveLength(1);
    expect(calls.filter((c) => c.url.startsWith("https://fcm.test/"))).toHaveLength(3); // called, served, review.request
  });

  it("an UNREGISTERED answer removes the device and records the answer", async () => {
    const account = await serviceAccount();
    const { token, events } = await calledCustomer();
    fakeGoogle(() => ({
      status: 404,
      body: {
        error: {
          code: 404,
          status: "NOT_FOUND",
          details: [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: "UNREGISTERED" }],
        },
      },
    }));
    const result = await feedEvents(events, { FCM_SERVICE_ACCOUNT: account.json, FCM_BASE_URL: "https://fcm.test" });
    expect(result.retryMessages).toEqual([]);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM push_devices WHERE token = ?").bind(token).first("n")).toBe(0);
    const push = (await deliveriesOf(ids(events))).find((r) => r.channel === "push");
    expect(push).toMatchObject({ status: "failed", provider: "fcm" });
    expect(push.provider_response).toContain("UNREGISTERED");
    expect(captured.retries).toEqual([]);
  });

  it("a provider 500 is retried with backoff, then dead-lettered into a visible record", async () => {
    const account = await serviceAccount();
    const { f, events } = await calledCustomer();
    fakeGoogle(() => ({ status: 500, body: { error: { code: 500, status: "INTERNAL" } } }));
    const over = { FCM_SERVICE_ACCOUNT: account.json, FCM_BASE_URL: "https://fcm.test" };
    await feedEvents(events, over);
    const key = (await deliveriesOf(ids(events))).find((r) => r.channel === "push").key;
    expect(captured.retries).toEqual([{ key }]);
    let row = (await deliveriesOf(ids(events))).find((r) => r.channel === "push");
    expect(row).toMatchObject({ status: "retrying", attempts: 1 });

    // The retry queue tries again, still 500: retried later, with a longer delay each time.
    const second = await feed("queue-service-notifications", [{ key }], over, 1);
    expect(second.retryMessages).toHaveLength(1);
    expect(second.delays).toEqual([60]);
    const third = await feed("queue-service-notifications", [{ key }], over, 2);
    expect(third.delays).toEqual([120]);
    row = (await deliveriesOf(ids(events))).find((r) => r.channel === "push");
    expect(row).toMatchObject({ status: "retrying", attempts: 3 });

    // Past max_retries the runtime dead-letters the message; its consumer records it.
    const dead = await feed("queue-service-notifications-dlq", [{ key }], over);
    expect(dead.explicitAcks).toHaveLength(1);
    row = (await deliveriesOf(ids(events))).find((r) => r.channel === "push");
    expect(row).toMatchObject({ status: "dead_lettered", attempts: 3 });
    expect(row.provider_response).toContain("500");
    const listed = await call("GET", `/v1/organizations/${f.organizationId}/notification-deliveries?status=dead_lettered`, {
      token: f.owner.token,
    });
    expect(expectOk(listed)).toEqual([
      expect.objectContaining({ channel: "push", status: "dead_lettered", type: "ticket.called", attempts: 3 }),
    ]);

    // A redelivered dead letter or a late retry message changes nothing more.
    await feed("queue-service-notifications", [{ key }], over, 4);
    expect((await deliveriesOf(ids(events))).find((r) => r.channel === "push").status).toBe("dead_lettered");
  });

  it("a retry that succeeds is sent once and not retried again", async () => {
    const account = await serviceAccount();
    const { events } = await calledCustomer();
    let answer: Answer = { status: 503, body: {} };
    const calls = fakeGoogle(() => answer);
    const over = { FCM_SERVICE_ACCOUNT: account.json, FCM_BASE_URL: "https://fcm.test" };
    await feedEvents(events, over);
    const key = captured.retries[0]!.key;
    answer = { status: 200, body: { name: "ok" } };
    const retry = await feed("queue-service-notifications", [{ key }], over, 1);
    expect(retry.retryMessages).toEqual([]);
    await feed("queue-service-notifications", [{ key }], over, 1);
    await feedEvents(events, over);
    expect(calls.filter((c) => c.url.startsWith("https://fcm.test/"))).toHaveLength(2);
    expect((await deliveriesOf(ids(events))).find((r) => r.channel === "push")).toMatchObject({ status: "sent", attempts: 2 });
  });
});

describe("SMS providers, chosen by configuration", () => {
  async function joinWithPhone() {
    captured = capture();
    const f = await queueFixture("pro");
    const alice = await customer({ language: "fr" });
    const t = await join(f, alice, { phone: "+2250701020304" });
    return { f, t, events: await eventsOf(captured, f.queueId) };
  }

  function fakeFetch(answer: (url: string) => Response) {
    const calls: { url: string; init: RequestInit }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      calls.push({ url, init: init ?? {} });
      return answer(url);
    });
    return calls;
  }

  it("Twilio: Basic auth, form body with To, From and the French text", async () => {
    const { f, t, events } = await joinWithPhone();
    const calls = fakeFetch(() => Response.json({ sid: "SM1", status: "queued" }, { status: 201 }));
    await feedEvents(events, {
      SMS_PROVIDER: "twilio",
      TWILIO_ACCOUNT_SID: "AC123",
      TWILIO_AUTH_TOKEN: "secret",
      TWILIO_FROM: "+33700000000",
      SMS_BASE_URL: "https://twilio.test",
    });
    expect(calls.map((c) => c.url)).toEqual(["https://twilio.test/2010-04-01/Accounts/AC123/Messages.json"]);
    expect(new Headers(calls[0]!.init.headers).get("Authorization")).toBe(`Basic ${btoa("AC123:secret")}`);
    const form = new URLSearchParams(String(calls[0]!.init.body));
    expect(form.get("To")).toBe("+2250701020304");
    expect(form.get("From")).toBe("+33700000000");
    expect(form.get("Body")).toBe(
      `Ticket ${t.displayCode}: Vous êtes en attente pour Main line, position 1, attente estimée ${t.estimatedWaitMinutes} min.`,
    );
    const sms = (await deliveriesOf(ids(events))).find((r) => r.channel === "sms");
    expect(sms).toMatchObject({ provider: "twilio", status: "sent" });
    expect(await smsUsed(f.organizationId)).toBe(1);
  });

  it("Orange: client-credentials token, then the outbound request; a 400 is final and gives the unit back", async () => {
    const { f, events } = await joinWithPhone();
    let refuse = false;
    const calls = fakeFetch((url) => {
      if (url.endsWith("/oauth/v3/token")) return Response.json({ access_token: "orange-token", expires_in: 3600 });
      return refuse
        ? Response.json({ requestError: { policyException: { messageId: "POL0001" } } }, { status: 400 })
        : Response.json({}, { status: 201 });
    });
    const over = {
      SMS_PROVIDER: "orange",
      ORANGE_CLIENT_ID: `id-${unique()}`,
      ORANGE_CLIENT_SECRET: "s",
      ORANGE_SENDER: "2250000000",
      SMS_BASE_URL: "https://orange.test",
    };
    await feedEvents(events, over);
    expect(calls.map((c) => c.url)).toEqual([
      "https://orange.test/oauth/v3/token",
      `https://orange.test/smsmessaging/v1/outbound/${encodeURIComponent("tel:+2250000000")}/requests`,
    ]);
    expect(String(calls[0]!.init.body)).toBe("grant_type=client_credentials");
    const request = JSON.parse(String(calls[1]!.init.body)).outboundSMSMessageRequest;
    expect(request).toMatchObject({ address: "tel:+2250701020304", senderAddress: "tel:+2250000000" });
    expect(new Headers(calls[1]!.init.headers).get("Authorization")).toBe("Bearer orange-token");
    expect(await smsUsed(f.organizationId)).toBe(1);

    // Another customer's SMS refused for good: recorded with the answer, not retried, not counted.
    refuse = true;
    const bob = await customer();
    await join(f, bob, { phone: "+2250799999999" });
    const more = await eventsOf(captured, f.queueId);
    await feedEvents(more, over);
    const failed = (await deliveriesOf(ids(more))).find((r) => r.channel === "sms");
    expect(failed).toMatchObject({ provider: "orange", status: "failed" });
    expect(failed.provider_response).toContain("POL0001");
    expect(captured.retries).toEqual([]);
    expect(await smsUsed(f.organizationId)).toBe(1);
  });
});

describe("EVENTS dead letters", () => {
  it("an event whose consumer failed every retry becomes a visible dead-lettered record", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const alice = await customer();
    await join(f, alice);
    const events = await eventsOf(captured, f.queueId);
    const result = await feed("queue-service-events-dlq", events);
    expect(result.explicitAcks).toHaveLength(events.length);
    await feed("queue-service-events-dlq", events); // redelivered: still one record
    const listed = await call("GET", `/v1/organizations/${f.organizationId}/notification-deliveries?status=dead_lettered`, {
      token: f.owner.token,
    });
    expect(expectOk(listed).map((r: any) => [r.eventId, r.channel, r.type])).toEqual(events.map((e) => [e.id, "event", e.type]));
  });

  it("a consumer fault retries the whole EVENTS batch with backoff", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    await join(f, await customer());
    const events = await eventsOf(captured, f.queueId);
    const reported = expectLogs("error", /D1 unavailable/);
    vi.spyOn(env.DB, "batch").mockRejectedValueOnce(new Error("D1 unavailable"));
    const result = await feedEvents(events);
    expect(reported).toHaveLength(1);
    expect(result.retryMessages).toHaveLength(events.length);
    expect(result.delays).toEqual(events.map(() => 30));
  });
});
