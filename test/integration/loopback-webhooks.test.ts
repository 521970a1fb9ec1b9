import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { WebhookDeliveryMessage } from "../../src/domain/webhooks";
import worker from "../../src/index";
import { WEBHOOKS_QUEUE } from "../../src/jobs/webhook-deliveries";
import { callSettledIn, expectError, expectOk, unique } from "../helpers/api";
import { createOrganization, registerUser, type TestUser } from "../helpers/fixtures";
import { fakeInternet } from "../helpers/outbound";

// Issue 41: under `npm run dev` (ENVIRONMENT=development) a webhook may point at a receiver on
// the same machine, and is delivered there signed as Standard Webhooks define; the tests'
// environment and production refuse such a URL as before. The environment is chosen per
// request by handing the Worker's own handlers a copy of the bindings.

afterEach(() => vi.restoreAllMocks());

const queued: WebhookDeliveryMessage[] = [];
const stubQueue = {
  send: async (body: WebhookDeliveryMessage) => void queued.push(body),
  sendBatch: async (messages: { body: WebhookDeliveryMessage }[]) => void queued.push(...messages.map((m) => m.body)),
};
const withEnvironment = (ENVIRONMENT: string, over: Record<string, unknown> = {}) =>
  ({ ...env, ENVIRONMENT, WEBHOOKS: stubQueue, ...over }) as unknown as typeof env;
const development = () => withEnvironment("development");
// Production refuses the public development TOKEN_SECRET: its own, with the test's as the previous.
const production = () =>
  withEnvironment("production", { TOKEN_SECRET: "a-production-token-secret-for-this-test", TOKEN_SECRET_PREVIOUS: env.TOKEN_SECRET });

async function deliver(bindings: typeof env, deliveryId: string) {
  const batch = createMessageBatch<WebhookDeliveryMessage>(WEBHOOKS_QUEUE, [
    { id: unique("msg"), timestamp: new Date(), attempts: 1, body: { deliveryId } },
  ]);
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch<any>, bindings, ctx);
  return getQueueResult(batch, ctx);
}

let owner: TestUser;
beforeAll(async () => {
  owner = await registerUser();
});

async function proOrganization(): Promise<string> {
  const org = await createOrganization(owner);
  await env.DB.prepare("UPDATE subscriptions SET plan = 'pro' WHERE organization_id = ?").bind(org.id).run();
  return org.id;
}

const subscribe = (bindings: typeof env, orgId: string, url: string) =>
  callSettledIn(bindings, "POST", `/v1/organizations/${orgId}/webhooks`, { token: owner.token, body: { url, events: ["*"] } });

const LOOPBACK_URLS = ["http://127.0.0.1:4000/hooks", "http://localhost:4000/hooks", "http://[::1]:4000/hooks", "https://localhost/hooks"];

describe("loopback receivers with ENVIRONMENT=development", () => {
  it("accepts 127.0.0.1, localhost and [::1] (http, any port) and looks none of them up", async () => {
    const orgId = await proOrganization();
    const net = fakeInternet();
    for (const url of LOOPBACK_URLS) {
      const created = expectOk(await subscribe(development(), orgId, url), 201);
      expect(created.url).toBe(url);
    }
    expect(net.calls).toEqual([]);
  });

  it("delivers to the local receiver, signed as Standard Webhooks define", async () => {
    const orgId = await proOrganization();
    const received: { headers: Record<string, string>; body: string }[] = [];
    const net = fakeInternet(
      {},
      {
        "http://127.0.0.1:4000/hooks": async (req) => {
          received.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
          return new Response("ok");
        },
      },
    );
    const created = expectOk(await subscribe(development(), orgId, "http://127.0.0.1:4000/hooks"), 201);
    const test = expectOk(
      await callSettledIn(development(), "POST", `/v1/organizations/${orgId}/webhooks/${created.id}/test`, { token: owner.token }),
      202,
    );
    expect(queued.splice(0).map((m) => m.deliveryId)).toEqual([test.id]);
    const result = await deliver(development(), test.id);
    expect(result.explicitAcks).toEqual([expect.any(String)]);
    expect(received).toHaveLength(1);
    expect(net.calls).toEqual(["http://127.0.0.1:4000/hooks"]);
    const payload = new Webhook(created.secret).verify(received[0]!.body, {
      "webhook-id": received[0]!.headers["webhook-id"]!,
      "webhook-timestamp": received[0]!.headers["webhook-timestamp"]!,
      "webhook-signature": received[0]!.headers["webhook-signature"]!,
    }) as { type: string; organizationId: string };
    expect(payload).toMatchObject({ type: "webhook.test", organizationId: orgId });
    const log = expectOk(
      await callSettledIn(development(), "GET", `/v1/organizations/${orgId}/webhooks/${created.id}/deliveries`, { token: owner.token }),
    );
    expect(log[0]).toMatchObject({ id: test.id, status: "succeeded", responseStatus: 200, attempts: 1 });
  });

  it("still refuses other private addresses, credentials in the URL and plain http to a public host", async () => {
    const orgId = await proOrganization();
    const net = fakeInternet({ "hooks.receiver.com": { A: ["93.184.216.34"] } });
    for (const url of [
      "http://10.0.0.5/hooks",
      "http://192.168.1.2:4000/hooks",
      "http://user:pw@127.0.0.1:4000/hooks",
      "http://hooks.receiver.com/hooks",
    ]) {
      expectError(await subscribe(development(), orgId, url), 400, "VALIDATION_ERROR");
    }
    expect(net.pageCalls()).toEqual([]);
  });
});

describe("loopback receivers elsewhere", () => {
  it("the tests' environment refuses every loopback URL as before", async () => {
    const orgId = await proOrganization();
    fakeInternet();
    for (const url of LOOPBACK_URLS) {
      const res = await subscribe(withEnvironment("test"), orgId, url);
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.field).toBe("url");
    }
  });

  it("production refuses them when stored, and refuses to deliver one stored under development", async () => {
    const orgId = await proOrganization();
    const net = fakeInternet({}, { "http://127.0.0.1:4000/hooks": () => new Response("ok") });
    for (const url of LOOPBACK_URLS) {
      const res = await subscribe(production(), orgId, url);
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.error.details.field).toBe("url");
    }
    const created = expectOk(await subscribe(development(), orgId, "http://127.0.0.1:4000/hooks"), 201);
    const test = expectOk(
      await callSettledIn(development(), "POST", `/v1/organizations/${orgId}/webhooks/${created.id}/test`, { token: owner.token }),
      202,
    );
    queued.splice(0);
    await deliver(withEnvironment("test"), test.id);
    expect(net.pageCalls()).toEqual([]);
    const log = expectOk(
      await callSettledIn(development(), "GET", `/v1/organizations/${orgId}/webhooks/${created.id}/deliveries`, { token: owner.token }),
    );
    expect(log[0]).toMatchObject({ id: test.id, status: "pending", responseStatus: null });
    expect(log[0].lastError).toMatch(/^refused: only https/);
  });
});
