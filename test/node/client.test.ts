import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { QueueApiError, QueueClient, verifyWebhook, WebhookVerificationError } from "../../clients/typescript/src/index";

// The client package's behaviour (clients/typescript/src) against stand-in servers on 127.0.0.1:
// typed errors from the envelope, retries with one Idempotency-Key, cursor pages, query
// parameters, and the Standard Webhooks check against signatures made by the `standardwebhooks`
// library the service signs with. The package installed from its tarball and run against
// `npm run dev` is test/node/client-package.test.ts.

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const servers: Server[] = [];
afterAll(() => servers.forEach((s) => s.close()));

async function serve(handler: (req: Seen, res: ServerResponse, n: number) => void): Promise<{ baseUrl: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const one = { method: req.method!, url: req.url!, headers: req.headers, body };
    seen.push(one);
    handler(one, res, seen.length);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

const TICKET = { id: "tkt_1", displayCode: "A-001", status: "waiting" };
const queueId = "que_1";

describe("the client package: errors", () => {
  it("a 4xx becomes a QueueApiError with status, code, field, details, docUrl and requestId from the envelope", async () => {
    const { baseUrl } = await serve((_req, res) =>
      json(res, 400, {
        success: false,
        error: {
          code: "VALIDATION_ERROR",
          message: "partySize: Too small",
          details: { field: "partySize", reason: "too_small" },
          timestamp: "2026-03-20T10:30:00.000Z",
          requestId: "req_abc",
          docUrl: `${"http://api.test"}/v1/errors/VALIDATION_ERROR`,
        },
      }),
    );
    const client = new QueueClient({ baseUrl, apiKey: "qk_live_x" });
    const err = await client
      .post("/v1/queues/{queueId}/operator-join", { path: { queueId }, body: { partySize: 0 } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueApiError);
    expect(err).toMatchObject({
      name: "QueueApiError",
      status: 400,
      code: "VALIDATION_ERROR",
      field: "partySize",
      details: { field: "partySize", reason: "too_small" },
      docUrl: "http://api.test/v1/errors/VALIDATION_ERROR",
      requestId: "req_abc",
      method: "POST",
    });
    expect((err as Error).message).toBe("400 VALIDATION_ERROR: partySize: Too small (request req_abc)");
  });

  it("an answer without the envelope (a proxy's page) is UNEXPECTED_RESPONSE, with the X-Request-ID header", async () => {
    const { baseUrl } = await serve((_req, res) => {
      res.writeHead(502, { "Content-Type": "text/html", "X-Request-ID": "req_proxy" });
      res.end("<html>Bad gateway</html>");
    });
    const err = await new QueueClient({ baseUrl, apiKey: "k", retries: 0 })
      .get("/v1/queues/{queueId}", { path: { queueId } })
      .catch((e) => e);
    expect(err).toMatchObject({ status: 502, code: "UNEXPECTED_RESPONSE", field: null, docUrl: null, requestId: "req_proxy" });
  });
});

describe("the client package: retries", () => {
  it("a POST answered 503 is sent again with the same Idempotency-Key, and its answer is the retry's", async () => {
    const { baseUrl, seen } = await serve((_req, res, n) =>
      n === 1
        ? json(res, 503, { success: false, error: { code: "PROVIDER_UNAVAILABLE", message: "down", details: {} } }, { "Retry-After": "0" })
        : json(res, 201, { success: true, data: TICKET }),
    );
    const client = new QueueClient({ baseUrl, apiKey: "qk_live_x", retryDelayMs: 1 });
    const answer = await client.post("/v1/queues/{queueId}/operator-join", { path: { queueId }, body: { visitorName: "Awa" } });
    expect(answer.data.displayCode).toBe("A-001");
    expect(seen).toHaveLength(2);
    const keys = seen.map((s) => s.headers["idempotency-key"]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(seen.map((s) => s.body)).toEqual(['{"visitorName":"Awa"}', '{"visitorName":"Awa"}']);
    expect(seen[0]!.headers["x-api-key"]).toBe("qk_live_x");
  });

  it("a POST whose connection drops is sent again with the same key; the caller's own key is used when given", async () => {
    const { baseUrl, seen } = await serve((_req, res, n) =>
      n === 1 ? res.socket!.destroy() : json(res, 200, { success: true, data: TICKET }),
    );
    const client = new QueueClient({ baseUrl, apiKey: "k", retryDelayMs: 1 });
    await client.post("/v1/queues/{queueId}/call-next", { path: { queueId }, body: {}, idempotencyKey: "call-7f3a" });
    expect(seen.map((s) => s.headers["idempotency-key"])).toEqual(["call-7f3a", "call-7f3a"]);
  });

  it("gives up after `retries` more attempts with the last answer's error; a PATCH is never retried", async () => {
    const { baseUrl, seen } = await serve((_req, res) =>
      json(res, 503, { success: false, error: { code: "PROVIDER_UNAVAILABLE", message: "down", details: {}, requestId: "req_5" } }),
    );
    const client = new QueueClient({ baseUrl, apiKey: "k", retries: 2, retryDelayMs: 1 });
    const err = await client.post("/v1/queues/{queueId}/call-next", { path: { queueId }, body: {} }).catch((e) => e);
    expect(err).toMatchObject({ status: 503, code: "PROVIDER_UNAVAILABLE", requestId: "req_5" });
    expect(seen).toHaveLength(3);
    seen.length = 0;
    await client.patch("/v1/business/queues/{queueId}", { path: { queueId }, body: { name: "x" } }).catch((e) => e);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers["idempotency-key"]).toBeUndefined();
  });

  it("a 4xx is not retried", async () => {
    const { baseUrl, seen } = await serve((_req, res) =>
      json(res, 409, { success: false, error: { code: "QUEUE_EMPTY", message: "empty", details: {} } }),
    );
    const err = await new QueueClient({ baseUrl, apiKey: "k", retryDelayMs: 1 })
      .post("/v1/queues/{queueId}/call-next", { path: { queueId }, body: {} })
      .catch((e) => e);
    expect(err).toMatchObject({ status: 409, code: "QUEUE_EMPTY" });
    expect(seen).toHaveLength(1);
  });
});

describe("the client package: queries and cursor pages", () => {
  it("paginate() follows meta.nextCursor with startingAfter until hasMore is false, keeping the typed query", async () => {
    const all = Array.from({ length: 5 }, (_, i) => ({ ...TICKET, id: `tkt_${i + 1}` }));
    const { baseUrl, seen } = await serve((req, res) => {
      const url = new URL(req.url, "http://x");
      const after = url.searchParams.get("startingAfter");
      const from = after ? all.findIndex((t) => t.id === after) + 1 : 0;
      const data = all.slice(from, from + 2);
      json(res, 200, {
        success: true,
        data,
        meta: { total: 5, page: null, limit: 2, hasMore: from + 2 < all.length, nextCursor: data.at(-1)?.id ?? null, previousCursor: null },
      });
    });
    const client = new QueueClient({ baseUrl, apiKey: "k" });
    const ids: string[] = [];
    for await (const t of client.paginate("/v1/queues/{queueId}/tickets", {
      path: { queueId },
      query: { status: "waiting", limit: 2, offset: null },
    }))
      ids.push(t.id);
    expect(ids).toEqual(["tkt_1", "tkt_2", "tkt_3", "tkt_4", "tkt_5"]);
    expect(seen.map((s) => s.url)).toEqual([
      "/v1/queues/que_1/tickets?status=waiting&limit=2",
      "/v1/queues/que_1/tickets?status=waiting&limit=2&startingAfter=tkt_2",
      "/v1/queues/que_1/tickets?status=waiting&limit=2&startingAfter=tkt_4",
    ]);
  });

  it("path parameters are encoded; a session token and Queue-Version are sent when set", async () => {
    const { baseUrl, seen } = await serve((_req, res) => json(res, 200, { success: true, data: TICKET }));
    await new QueueClient({ baseUrl, sessionToken: "sess_1", queueVersion: "2026-03-01" }).get("/v1/tickets/{ticketId}", {
      path: { ticketId: "tkt/1 2" },
    });
    expect(seen[0]!.url).toBe("/v1/tickets/tkt%2F1%202");
    expect(seen[0]!.headers.authorization).toBe("Bearer sess_1");
    expect(seen[0]!.headers["queue-version"]).toBe("2026-03-01");
  });
});

describe("the client package: verifyWebhook", () => {
  const secret = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
  const event = {
    id: "evt_1",
    type: "ticket.called",
    createdAt: "2026-03-20T10:30:00.000Z",
    organizationId: "org_1",
    data: { ticketId: "tkt_1" },
  };
  const body = JSON.stringify(event);
  const at = new Date("2026-03-20T10:30:05.000Z");
  // The headers the service sends (src/jobs/webhook-deliveries.ts), signed by the same library.
  const headers = (signature = new Webhook(secret).sign("evt_1", at, body)) => ({
    "webhook-id": "evt_1",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signature,
  });

  it("accepts a delivery signed by standardwebhooks, from a Headers or a Node headers object, and answers the event", async () => {
    expect(await verifyWebhook(body, new Headers(headers()), secret, { now: at })).toEqual(event);
    expect(await verifyWebhook(new TextEncoder().encode(body), headers(), secret, { now: at })).toEqual(event);
  });

  it("during a rotation the delivery carries two signatures: either secret verifies it", async () => {
    const old = `whsec_${Buffer.from("an older secret, still accepted!").toString("base64")}`;
    const both = `${new Webhook(secret).sign("evt_1", at, body)} ${new Webhook(old).sign("evt_1", at, body)}`;
    expect(await verifyWebhook(body, headers(both), old, { now: at })).toEqual(event);
    expect(await verifyWebhook(body, headers(new Webhook(old).sign("evt_1", at, body)), [secret, old], { now: at })).toEqual(event);
  });

  it("refuses a changed body, another secret, a missing header and a timestamp outside 5 minutes", async () => {
    const refused = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(WebhookVerificationError);
    await refused(verifyWebhook(body.replace("tkt_1", "tkt_2"), headers(), secret, { now: at }));
    await refused(
      verifyWebhook(body, headers(), `whsec_${Buffer.from("another secret entirely, 32 byte").toString("base64")}`, { now: at }),
    );
    await refused(verifyWebhook(body, { "webhook-id": "evt_1", "webhook-signature": headers()["webhook-signature"] }, secret, { now: at }));
    await refused(verifyWebhook(body, headers(), secret, { now: new Date(at.getTime() + 301_000) }));
    await expect(verifyWebhook(body, headers(), secret, { now: new Date(at.getTime() + 299_000) })).resolves.toEqual(event);
  });
});
