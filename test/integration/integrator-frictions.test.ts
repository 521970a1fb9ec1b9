import { SELF } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { render } from "../../src/domain/notification-templates";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { captureEvents } from "../helpers/events";
import { testClock } from "../helpers/clock";
import { createApiKey, createOrganization, createQueueFixture, registerUser, setPlan } from "../helpers/fixtures";
import { fakeInternet } from "../helpers/outbound";

// Frictions a newcomer hit while integrating (issue #32): each one fixed with the test below.

describe("a route called with the wrong method", () => {
  it("answers 405 METHOD_NOT_ALLOWED with Allow, and an unknown path still 404", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "banking" });
    const f = await createQueueFixture(owner, org.id);
    const wrong = await call("GET", `/v1/queues/${f.queueId}/call-next`, { token: owner.token });
    expectError(wrong, 405, "METHOD_NOT_ALLOWED");
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(wrong.body.error.details).toMatchObject({ allowed: ["POST"] });
    // A path with several methods lists them all.
    const put = await call("PUT", `/v1/desks/dsk_nothing`, { token: owner.token, body: {} });
    expectError(put, 405, "METHOD_NOT_ALLOWED");
    expect(put.headers.get("allow")!.split(", ").sort()).toEqual(["DELETE", "GET", "PATCH"]);
    expectError(await call("GET", `/v1/no-such-thing`, { token: owner.token }), 404, "NOT_FOUND");
  });
});

describe("desks and counters in what an integrator reads", () => {
  it("a desk's call: ticket.called carries the counter, the SMS names it, the CSV export and operators analytics name the desk", async () => {
    testClock.set("2026-06-10T08:00:00.000Z");
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "banking" });
    const f = await createQueueFixture(owner, org.id);
    const desk = expectOk(
      await call("POST", `/v1/locations/${f.locationId}/desks`, {
        token: owner.token,
        body: { name: unique("Guichet "), queueIds: [f.queueId] },
      }),
      201,
    );
    expectOk(await call("POST", `/v1/desks/${desk.id}/open`, { token: owner.token }));
    const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: owner.token, body: {} }), 201);
    await settle(f.queueId);

    const { sent, restore } = captureEvents();
    try {
      expectOk(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: owner.token }));
      await settle(f.queueId);
    } finally {
      restore();
    }
    const called = sent.find((e) => e.type === "ticket.called");
    expect(called?.data).toMatchObject({ displayCode: ticket.displayCode, counter: desk.name });
    expect(render("ticket.called", "en", { code: "A-001", counter: "Guichet 3", queue: "Main" }).body).toBe(
      "Ticket A-001: please come forward now to Guichet 3 (Main).",
    );
    expect(render("ticket.called", "fr", { code: "A-001", counter: "Guichet 3", queue: "Main" }).body).toBe(
      "Ticket A-001 : présentez-vous maintenant au Guichet 3 (Main).",
    );

    expectOk(await call("POST", `/v1/tickets/${ticket.id}/recall`, { token: owner.token }));
    expectOk(await call("POST", `/v1/tickets/${ticket.id}/serve`, { token: owner.token }));
    testClock.advance(5 * 60_000);
    expectOk(await call("POST", `/v1/tickets/${ticket.id}/complete`, { token: owner.token, body: {} }));
    await settle(f.queueId);

    const { key } = await createApiKey(owner, org.id, ["read:analytics"]);
    const csv = await SELF.fetch(`https://api.test/v1/analytics/export.csv?from=2026-06-10&to=2026-06-11&queueId=${f.queueId}`, {
      headers: { "X-API-Key": key },
    });
    expect(csv.status).toBe(200);
    const [header, row] = (await csv.text())
      .replace(/^\uFEFF/, "")
      .split("\r\n")
      .map((line) => line.split(","));
    const cell = (name: string) => row![header!.indexOf(name)];
    expect(cell("desk")).toBe(desk.name);
    expect(cell("deskId")).toBe(desk.id);

    const operators = expectOk(await call("GET", `/v1/analytics/operators?from=2026-06-10&to=2026-06-11`, { apiKey: key }));
    expect(operators.operators).toEqual([expect.objectContaining({ operatorId: owner.id, served: 1, recalls: 1, desk: desk.name })]);
  });
});

describe("webhooks when our DNS resolver cannot be reached", () => {
  it("a subscription is created (the address is checked again at every delivery); a private or unknown host is still refused", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    await setPlan(org.id, "pro");
    const subscribe = (url: string) =>
      call("POST", `/v1/organizations/${org.id}/webhooks`, { token: owner.token, body: { url, events: ["*"] } });

    const resolverDown = vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("getaddrinfo ENOTFOUND cloudflare-dns.com"));
    const created = expectOk(await subscribe("https://hooks.example.com/queue"), 201);
    expect(created.url).toBe("https://hooks.example.com/queue");
    expect(resolverDown).toHaveBeenCalled();
    resolverDown.mockRestore();

    const net = fakeInternet({ "private.example": { A: ["10.0.0.8"] } });

    expectError(await subscribe("https://private.example/queue"), 400, "VALIDATION_ERROR", "url");
    expectError(await subscribe("https://nowhere.example/queue"), 400, "VALIDATION_ERROR", "url");
    expect(net.calls.every((u) => new URL(u).hostname === "cloudflare-dns.com")).toBe(true);
  });
});
