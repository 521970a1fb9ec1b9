import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, createOrganization, createQueueFixture, registerUser } from "../helpers/fixtures";

// The pages (docs/pages.md) and the one API read they needed that did not exist: the kiosk's.

describe("the pages' HTML shells", () => {
  it.each(["/console", "/console/floor", "/kiosk?location=loc_x&key=qk_live_x", "/t/tkt_anything", "/appointments/apt_anything"])(
    "GET %s answers its HTML shell",
    async (path) => {
      const res = await SELF.fetch(`https://api.test${path}`);
      // The shells are built into public/pages by scripts/build-pages.mjs on install.
      if (res.status === 404) {
        const body = (await res.json()) as { error: { message: string } };
        expect(body.error.message).toContain("not built");
        return;
      }
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toContain("text/html");
      expect(res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
      const html = await res.text();
      expect(html).toMatch(/<script type="module" src="\/pages\/[a-z]+-[A-Z0-9]+\.js"><\/script>/);
    },
  );
});

describe("GET /v1/widget/locations/{locationId}/kiosk", () => {
  it("answers the location's active queues to a widget key, and 404 to another organization's key", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "other" });
    const f = await createQueueFixture(owner, org.id);
    const widget = await createApiKey(owner, org.id, ["widget"]);
    const res = await call("GET", `/v1/widget/locations/${f.locationId}/kiosk`, { apiKey: widget.key });
    expectOk(res);
    expect(res.body.data).toMatchObject({
      locationId: f.locationId,
      organizationId: org.id,
      name: "Main branch",
      timezone: expect.any(String),
      queues: [{ queueId: f.queueId, queueName: "Main queue", letter: "A", serviceId: f.serviceId, serviceName: "Counter" }],
    });
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");

    // A paused queue takes no ticket: it leaves the kiosk.
    expectOk(
      await call("PATCH", `/v1/business/queues/${f.queueId}/status`, {
        token: owner.token,
        body: { status: "paused" },
        headers: { "X-Organization-Id": org.id },
      }),
    );
    await expect
      .poll(async () => (await call("GET", `/v1/widget/locations/${f.locationId}/kiosk`, { apiKey: widget.key })).body.data.queues.length, {
        timeout: 3000,
      })
      .toBe(0);

    const other = await registerUser();
    const otherOrg = await createOrganization(other, { type: "other" });
    const otherKey = await createApiKey(other, otherOrg.id, ["widget"]);
    expectError(await call("GET", `/v1/widget/locations/${f.locationId}/kiosk`, { apiKey: otherKey.key }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/widget/locations/loc_missing000000000000/kiosk`, { apiKey: widget.key }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/widget/locations/${f.locationId}/kiosk`), 401, "AUTHENTICATION_ERROR");
  });
});
