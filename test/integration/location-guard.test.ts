import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { acceptInvitation, createOrganization, registerUser, setPlan, type TestUser } from "../helpers/fixtures";

// Issue 36: a manager limited to Lyon could change Paris through the routes whose call site
// forgot to pass the location to `authorize`. The resource guard (src/access/guard.ts) now decides
// before any handler runs, and the body resolver for ids that arrive in a body: every write on
// Paris answers 404 and changes nothing, while the same write on Lyon is accepted.

interface Site {
  locationId: string;
  serviceId: string;
  queueId: string;
}

let owner: TestUser;
let organizationId: string;
let lyon: Site;
let paris: Site;
let lyonManager: TestUser;

async function site(name: string, latitude: number, longitude: number): Promise<Site> {
  const token = owner.token;
  const location = expectOk(
    await call("POST", "/v1/locations", { token, body: { organizationId, name, address: `1 rue de ${name}`, latitude, longitude } }),
    201,
  );
  const service = expectOk(
    await call("POST", "/v1/services", {
      token,
      body: { name: `Teller ${name}`, locationIds: [location.id], serviceTypeId: "st_bank_teller" },
    }),
    201,
  );
  const headers = { "X-Organization-Id": organizationId };
  const queue = expectOk(await call("POST", "/v1/business/queues", { token, headers, body: { serviceId: service.id, name } }), 201);
  const intake = [{ key: "reason", label: { fr: "Motif", en: "Reason" }, type: "text" }];
  expectOk(await call("PUT", `/v1/services/${service.id}/intake`, { token, body: { fields: intake } }));
  expectOk(await call("POST", `/v1/services/${service.id}/outcomes`, { token, body: { code: "done", label: "Done" } }), 201);
  return { locationId: location.id, serviceId: service.id, queueId: queue.id };
}

beforeAll(async () => {
  owner = await registerUser();
  organizationId = (await createOrganization(owner, { type: "banking" })).id;
  await setPlan(organizationId, "pro");
  lyon = await site("Lyon", 45.76, 4.84);
  paris = await site("Paris", 48.85, 2.35);
  lyonManager = await registerUser();
  expectOk(
    await call("POST", `/v1/organizations/${organizationId}/members`, {
      token: owner.token,
      body: { email: lyonManager.email, role: "manager", locationIds: [lyon.locationId] },
    }),
    202,
  );
  await acceptInvitation(lyonManager, organizationId);
});

const newQuestions = () => ({ fields: [{ key: "stolen", label: { fr: "Volé", en: "Stolen" }, type: "text" }] });
const nfcBody = (queueId: string) => ({
  nfcId: `04:${unique("G")}`,
  queueId,
  locationName: "Door",
  latitude: 48.85,
  longitude: 2.35,
});

/** The organization's state as its owner reads it, for "nothing changed". */
async function ownerView(s: Site) {
  const token = owner.token;
  return {
    intake: expectOk(await call("GET", `/v1/services/${s.serviceId}/intake`, { token })),
    outcomes: expectOk(await call("GET", `/v1/services/${s.serviceId}/outcomes`, { token })),
    qrTokens: expectOk(await call("GET", "/v1/qr-tokens?limit=100", { token, headers: { "X-Organization-Id": organizationId } })),
    nfcTags: expectOk(await call("GET", "/v1/nfc/tags?limit=100", { token, headers: { "X-Organization-Id": organizationId } })),
  };
}

type Write = [label: string, method: string, path: (s: Site) => string, body: (s: Site) => unknown, okStatus: number];

const writes: Write[] = [
  ["PUT intake", "PUT", (s) => `/v1/services/${s.serviceId}/intake`, () => newQuestions(), 200],
  ["POST outcome", "POST", (s) => `/v1/services/${s.serviceId}/outcomes`, () => ({ code: unique("x").toLowerCase(), label: "Mine" }), 201],
  ["POST qr-token (queue)", "POST", () => "/v1/qr-tokens", (s) => ({ purpose: "queue_join", queueId: s.queueId }), 201],
  ["POST qr-token (service)", "POST", () => "/v1/qr-tokens", (s) => ({ purpose: "service_checkin", serviceId: s.serviceId }), 201],
  ["POST nfc tag", "POST", () => "/v1/nfc/tags", (s) => nfcBody(s.queueId), 201],
];

describe("a Lyon-scoped manager's writes on Paris (issue 36)", () => {
  it.each(writes)("%s on Paris answers 404 and changes nothing", async (_label, method, path, body) => {
    const before = await ownerView(paris);
    const res = await call(method, path(paris), { token: lyonManager.token, body: body(paris) });
    expectError(res, 404, "NOT_FOUND");
    expect(await ownerView(paris)).toEqual(before);
  });

  it.each(writes)(
    "%s on Lyon is accepted (the refusal above is the scope, not the input)",
    async (_label, method, path, body, okStatus) => {
      expectOk(await call(method, path(lyon), { token: lyonManager.token, body: body(lyon) }), okStatus);
    },
  );

  it("a QR token naming a Lyon queue of a Paris service is refused as well", async () => {
    // Both ids are checked: one reachable id does not open the other.
    const res = await call("POST", "/v1/qr-tokens", {
      token: lyonManager.token,
      body: { purpose: "verification", serviceId: paris.serviceId, queueId: lyon.queueId },
    });
    expectError(res, 404, "NOT_FOUND");
  });
});
