import { execFile } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";

// `npm run webhooks:listen` (issue #32) against a stand-in of GET /v1/events (the route itself is
// tested in test/integration/event-stream.test.ts): it pages with startingAfter and forwards
// each event to a local receiver that verifies the signature with standardwebhooks.

const run = promisify(execFile);
const script = path.join(import.meta.dirname, "..", "..", "scripts", "webhooks-listen.mjs");
const SECRET = `whsec_${Buffer.from("a laptop's listening secret!").toString("base64")}`;

const EVENTS = [1, 2, 3].map((n) => ({
  id: `evt_${n}`,
  type: n === 2 ? "ticket.called" : "ticket.created",
  createdAt: `2026-03-20T10:3${n}:00.000Z`,
  organizationId: "org_d3m0",
  data: { queueId: "que_d3m0", ticketId: `tkt_${n}`, displayCode: `A-00${n}` },
}));

async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

const servers: Server[] = [];
afterAll(() => servers.forEach((s) => s.close()));

describe("npm run webhooks:listen", () => {
  it("forwards every event once, in order, signed so that the receiver's standardwebhooks verify() accepts it", async () => {
    const asked: string[] = [];
    const api = createServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      asked.push(`${url.pathname}?${url.searchParams} key=${req.headers["x-api-key"]}`);
      const after = url.searchParams.get("startingAfter");
      const from = after ? EVENTS.findIndex((e) => e.id === after) + 1 : 0;
      const data = EVENTS.slice(from, from + 2); // pages of two, whatever the limit
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          success: true,
          data,
          meta: { limit: 2, hasMore: from + 2 < EVENTS.length, nextCursor: data.at(-1)?.id ?? after },
        }),
      );
    });
    const verified: unknown[] = [];
    const receiver = createServer(async (req, res) => {
      const body = await bodyOf(req);
      try {
        verified.push(new Webhook(SECRET).verify(body, req.headers as Record<string, string>));
        res.statusCode = 204;
      } catch {
        res.statusCode = 400;
      }
      res.end();
    });
    servers.push(api, receiver);
    const [apiUrl, receiverUrl] = await Promise.all([listen(api), listen(receiver)]);

    const { stdout } = await run("node", [
      script,
      "--once",
      "--api",
      apiUrl,
      "--api-key",
      "qk_live_demo",
      "--secret",
      SECRET,
      "--forward-to",
      `${receiverUrl}/hooks`,
    ]);
    expect(verified).toEqual(EVENTS);
    expect(stdout).toContain(`Signing secret (verify with it): ${SECRET}`);
    expect(stdout.match(/→ 204/g)).toHaveLength(3);
    expect(asked[0]).toBe("/v1/events?limit=100 key=qk_live_demo");
    expect(asked[1]).toBe("/v1/events?limit=100&startingAfter=evt_2 key=qk_live_demo");
  });

  it("prints the API's refusal (code and message) and exits 1", async () => {
    const api = createServer((_req, res) => {
      res.statusCode = 403;
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          success: false,
          error: { code: "AUTHORIZATION_ERROR", message: "This API key cannot do this: it needs a key with manage:webhooks (or admin)" },
        }),
      );
    });
    servers.push(api);
    const apiUrl = await listen(api);
    const failure = await run("node", [
      script,
      "--once",
      "--api",
      apiUrl,
      "--api-key",
      "qk_live_ro",
      "--forward-to",
      "http://127.0.0.1:9/hooks",
    ]).catch((e) => e);
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain(
      "GET /v1/events answered 403 AUTHORIZATION_ERROR: This API key cannot do this: it needs a key with manage:webhooks (or admin)",
    );
  });
});
