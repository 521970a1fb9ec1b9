import worker from "../../src/index";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { call, expectError, expectOk, type ApiResponse } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { addMember, createApiKey, queueFixture, registerUser, type Fixture } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, type Captured } from "../helpers/notifications";

// Issue 26, the part left unbuilt: where the organization requires it, a visitor's number is
// proven by a one-time code before it is texted anything else. Every SMS goes to a fake Twilio:
// the code is read from the body the provider received, as the visitor would read it.

const TWILIO: Partial<Env> = {
  SMS_PROVIDER: "twilio",
  TWILIO_ACCOUNT_SID: "AC123",
  TWILIO_AUTH_TOKEN: "secret",
  TWILIO_FROM: "+33700000000",
  SMS_BASE_URL: "https://twilio.test",
};

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
  vi.restoreAllMocks();
  testClock.reset();
});

/** The fake Twilio: every SMS body it accepted, with its recipient. */
function twilio(): { to: string; body: string }[] {
  const sent: { to: string; body: string }[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    if (!url.startsWith("https://twilio.test/")) throw new TypeError(`unexpected fetch ${url}`);
    const form = new URLSearchParams(String(init?.body));
    sent.push({ to: form.get("To")!, body: form.get("Body")! });
    return Response.json({ sid: `SM${sent.length}`, status: "queued" }, { status: 201 });
  });
  return sent;
}

/** A request answered by the Worker with the fake Twilio configured (the code is texted during the request). */
async function viaTwilio(
  method: string,
  path: string,
  opts: { body?: unknown; token?: string; apiKey?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.apiKey) headers["X-API-Key"] = opts.apiKey;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`https://api.test${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const ctx = createExecutionContext();
  const res = await worker.fetch!(request as any, { ...env, ...TWILIO } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body: await res.json() };
}

let addressNo = 0;
/** Each join from its own address: the per-address cap is not what these tests are about. */
const nextAddress = () => `198.51.100.${++addressNo}`;

function widgetJoin(f: Fixture, key: string, phone: string) {
  return viaTwilio("POST", `/v1/widget/queue/${f.queueId}/join`, {
    apiKey: key,
    body: { phone },
    headers: { "CF-Connecting-IP": nextAddress() },
  });
}

const verify = (ticketId: string, code: string, auth: { ticketToken?: string; token?: string }) =>
  viaTwilio("POST", `/v1/tickets/${ticketId}/phone-verification`, {
    body: { code },
    token: auth.token,
    headers: auth.ticketToken ? { "X-Ticket-Token": auth.ticketToken } : {},
  });

const resend = (ticketId: string, auth: { ticketToken?: string; token?: string }) =>
  viaTwilio("POST", `/v1/tickets/${ticketId}/phone-verification/resend`, {
    token: auth.token,
    headers: auth.ticketToken ? { "X-Ticket-Token": auth.ticketToken } : {},
  });

async function policy(f: Fixture, body: Record<string, unknown>) {
  return expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}/sms-policy`, { token: f.owner.token, body }));
}

/** The 6-digit code of a code message. */
function codeIn(body: string): string {
  const m = /(\d{6})/.exec(body);
  expect(m, body).not.toBeNull();
  return m![1]!;
}

/** A 6-digit code that is not `code`. */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** The delivery log's SMS rows of the organization, oldest first. */
async function smsLog(f: Fixture): Promise<any[]> {
  const rows = expectOk(
    await call("GET", `/v1/organizations/${f.organizationId}/notification-deliveries?limit=100`, { token: f.owner.token }),
  ) as any[];
  return rows.filter((r) => r.channel === "sms").reverse();
}

async function callNext(f: Fixture) {
  const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
  await feedEvents(await eventsOf(captured!, f.queueId), TWILIO);
  return ticket;
}

describe("requirePhoneCode on the SMS policy", () => {
  it("is false by default, set by PATCH, and null puts it back to the default", async () => {
    const f = await queueFixture("pro");
    const path = `/v1/organizations/${f.organizationId}/sms-policy`;
    expect(expectOk(await call("GET", path, { token: f.owner.token })).requirePhoneCode).toBe(false);
    expect((await policy(f, { requirePhoneCode: true })).requirePhoneCode).toBe(true);
    expect(expectOk(await call("GET", path, { token: f.owner.token })).requirePhoneCode).toBe(true);
    expect((await policy(f, { requirePhoneCode: null })).requirePhoneCode).toBe(false);
    expectError(
      await call("PATCH", path, { token: f.owner.token, body: { requirePhoneCode: "yes" } }),
      400,
      "VALIDATION_ERROR",
      "requirePhoneCode",
    );
  });
});
