import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import devWorker from "../../scripts/dev-worker";
import { DEMO, seedSql } from "../../scripts/seed.mjs";
import { call } from "../helpers/api";

// `npm run dev` gives the demo queue the id the documentation's examples name, through the dev
// Worker's /__dev/demo-queue (scripts/dev-worker.ts), which the deployable Worker does not have.

async function devFetch(request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await devWorker.fetch(request as Request<unknown, IncomingRequestCfProperties>, env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const demoQueue = () =>
  new Request("http://127.0.0.1/__dev/demo-queue", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ id: DEMO.queue.id, organizationId: DEMO.organization.id, serviceId: DEMO.service.id, name: DEMO.queue.name }),
  });

beforeAll(async () => {
  await env.DB.batch(
    seedSql()
      .split("\n")
      .map((sql) => env.DB.prepare(sql)),
  );
});

describe("the dev seed's demo queue", () => {
  it("is created under its documented id by the API's createQueue, once, and takes tickets", async () => {
    expect(DEMO.queue.id).toBe("que_d3m0q000000000000000");
    const first = await devFetch(demoQueue());
    expect(first.status).toBe(201);
    const created = ((await first.json()) as any).data;
    expect(created).toMatchObject({ id: DEMO.queue.id, letter: "A", status: "active", serviceId: DEMO.service.id });
    const again = await devFetch(demoQueue());
    expect(again.status).toBe(200);
    expect(((await again.json()) as any).data.id).toBe(DEMO.queue.id);

    // Its room was configured as the API configures any queue's: the documented samples work.
    const joined = await call("POST", `/v1/queues/${DEMO.queue.id}/operator-join`, {
      apiKey: DEMO.apiKey.value,
      body: { visitorName: "Awa Diallo" },
    });
    expect(joined.status, JSON.stringify(joined.body)).toBe(201);
    expect(joined.body.data.displayCode).toMatch(/^A-\d+$/);
    const read = await call("GET", `/v1/queues/${DEMO.queue.id}`, { apiKey: DEMO.apiKey.value });
    expect(read.status).toBe(200);
    expect(read.body.data.waitingCount).toBe(1);
  });

  it("seeds the service's outcomes, so a ticket can be completed with one", async () => {
    const outcomes = await call("GET", `/v1/services/${DEMO.service.id}/outcomes`, { apiKey: DEMO.apiKey.value });
    expect(outcomes.status).toBe(200);
    expect(outcomes.body.data.map((o: any) => o.code).sort()).toEqual(["card_replaced", "deposit_made", "referred"]);
    // In French, like the rest of the Paris demo.
    expect(outcomes.body.data.map((o: any) => o.label).sort()).toEqual(["Carte remplacée", "Dépôt effectué", "Orienté vers un conseiller"]);
  });

  it("/ in development is a landing page with the pages and the demo's sign-ins; not elsewhere", async () => {
    const dev = { ...env, ENVIRONMENT: "development" };
    const ctx = createExecutionContext();
    const page = await devWorker.fetch(new Request("http://127.0.0.1:8787/") as Request<unknown, IncomingRequestCfProperties>, dev, ctx);
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toContain("text/html");
    const html = await page.text();
    for (const text of [
      "/console",
      "/console/floor",
      "/kiosk?location=",
      `location=${DEMO.location.id}`,
      DEMO.operator.email,
      DEMO.owner.password,
    ])
      expect(html).toContain(text);
    const other = await devWorker.fetch(
      new Request("http://127.0.0.1:8787/") as Request<unknown, IncomingRequestCfProperties>,
      { ...env, ENVIRONMENT: "production" },
      createExecutionContext(),
    );
    expect(other.status).toBe(404);
    expect((await SELF.fetch("http://127.0.0.1/")).status).toBe(404);
  });

  it("the deployable Worker has no /__dev route", async () => {
    const res = await SELF.fetch(demoQueue());
    expect(res.status).toBe(404);
  });
});
