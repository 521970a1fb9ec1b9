import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectOk, unique, type ApiResponse } from "./api";
import { acceptInvitation, addMember, createApiKey, createOrganization, registerUser, setPlan, walkIn, type TestUser } from "./fixtures";

// The probe from the API document (issue 36). Every operation of /v1/openapi.json with an id in
// its path is called by (a) the owner of another organization and (b) a manager of the same
// organization limited to another location; each must get the answer an unknown id gets
// (404 NOT_FOUND), and the organization, read by its owner, must be unchanged afterwards.
// A new operation is probed without editing this file. Operations are left out by what they
// declare, never by name:
//   - security `[]` or `{}` among its alternatives: public (anonymous callers are its audience);
//   - tag `Widget`: the widget's own rules (widget keys, ticket tokens; widget.test.ts);
//   - tag `Test mode`: test keys of an organization's twin only (a session, as the probe asks,
//     gets 403 whatever the id); test-simulations.test proves another twin's key gets the 404;
//   - `x-outside-callers`: callers outside the organization (customers, a ticket's owner, an
//     invitee) are its audience; their rules are tested with those routes.
// Location-scoped resources get both probes; organization-level ones (`/organizations/{id}/…`,
// billing, the organization's calendar) only (a): a scoped member is a member of the organization.

type Method = "get" | "post" | "put" | "patch" | "delete";
const METHODS: readonly Method[] = ["get", "post", "put", "patch", "delete"];

export interface ProbedOperation {
  method: string;
  path: string;
  operationId: string;
  params: string[];
}

interface Operation {
  operationId?: string;
  security?: Record<string, unknown>[];
  tags?: string[];
  "x-outside-callers"?: string;
}

/** Which operations the probe leaves out, and why: from their declarations alone. */
export function exclusionOf(op: Operation): string | null {
  if (!op.security || op.security.length === 0 || op.security.some((s) => Object.keys(s).length === 0)) return "public";
  if (op.tags?.includes("Widget")) return "widget";
  if (op.tags?.includes("Test mode")) return "test mode";
  if (op["x-outside-callers"]) return `outside callers: ${op["x-outside-callers"]}`;
  return null;
}

export async function probedOperations(): Promise<{ probed: ProbedOperation[]; excluded: Record<string, string[]>; total: number }> {
  const doc = (await call("GET", "/v1/openapi.json")).body as { paths: Record<string, Partial<Record<Method, Operation>>> };
  const probed: ProbedOperation[] = [];
  const excluded: Record<string, string[]> = {};
  let total = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    if (params.length === 0) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      total++;
      const why = exclusionOf(op);
      if (why) (excluded[why.split(":")[0]!] ??= []).push(`${method.toUpperCase()} ${path}`);
      else probed.push({ method: method.toUpperCase(), path, operationId: op.operationId ?? `${method} ${path}`, params });
    }
  }
  return { probed, excluded, total };
}

/** A stable shard of an operation (FNV-1a of method and path), so each file probes its own part. */
export function shardOf(op: ProbedOperation, shards: number): number {
  let h = 0x811c9dc5;
  for (const ch of `${op.method} ${op.path}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h % shards;
}

/** The resource a path's first id names, for the two probes: location-scoped or organization-level. */
const LOCATION_SCOPED = new Set(["serviceId", "locationId", "queueId", "ticketId", "deskId", "eventId", "nfcId", "id"]);

interface Victim {
  owner: TestUser;
  ids: Record<string, string>;
  /** Ids that no resource has, per path parameter, in the same format. */
  unknown: Record<string, string>;
}

const blank = (prefix: string) => `${prefix}_${"0".repeat(20)}`;

async function victim(): Promise<Victim> {
  const owner = await registerUser();
  const organizationId = (await createOrganization(owner, { type: "banking" })).id as string;
  await setPlan(organizationId, "pro");
  const token = owner.token;
  const place = async (name: string, latitude: number, longitude: number) =>
    expectOk(
      await call("POST", "/v1/locations", { token, body: { organizationId, name, address: `1 rue de ${name}`, latitude, longitude } }),
      201,
    ).id as string;
  const lyon = await place("Lyon", 45.76, 4.84);
  const paris = await place("Paris", 48.85, 2.35);
  const service = expectOk(
    await call("POST", "/v1/services", { token, body: { name: "Teller", locationIds: [paris], serviceTypeId: "st_bank_teller" } }),
    201,
  );
  const headers = { "X-Organization-Id": organizationId };
  const queue = expectOk(
    await call("POST", "/v1/business/queues", { token, headers, body: { serviceId: service.id, name: "Paris" } }),
    201,
  );
  const ticket = await walkIn(owner, queue.id);
  expectOk(await call("POST", `/v1/tickets/${ticket.id}/labels`, { token, body: { label: "vip" } }));
  const desk = expectOk(await call("POST", `/v1/locations/${paris}/desks`, { token, body: { name: "Desk", queueIds: [queue.id] } }), 201);
  const event = expectOk(
    await call("POST", `/v1/calendar/organization/${organizationId}`, {
      token,
      body: {
        title: "Closure",
        eventType: "closure",
        locationId: paris,
        startDate: "2030-01-01T10:00:00Z",
        endDate: "2030-01-01T12:00:00Z",
      },
    }),
    201,
  );
  const nfcId = `04:${unique("P")}`;
  expectOk(
    await call("POST", "/v1/nfc/tags", {
      token,
      body: { nfcId, queueId: queue.id, locationName: "Door", latitude: 48.85, longitude: 2.35 },
    }),
    201,
  );
  const qr = expectOk(await call("POST", "/v1/qr-tokens", { token, body: { purpose: "queue_join", queueId: queue.id } }), 201);
  expectOk(await call("POST", `/v1/services/${service.id}/outcomes`, { token, body: { code: "done", label: "Done" } }), 201);
  const operator = await addMember(owner, organizationId, "operator");
  const key = await createApiKey(owner, organizationId, ["read"]);
  const invitation = expectOk(
    await call("POST", `/v1/organizations/${organizationId}/members`, {
      token,
      body: { email: `${unique("inv")}@example.com`, role: "operator" },
    }),
    202,
  );
  const suffix = () => crypto.randomUUID().replace(/-/g, "").slice(0, 20);
  const webhookId = `whk_${suffix()}`;
  const deliveryId = `dlv_${suffix()}`;
  // Written straight to D1: creating a webhook through the API resolves its host name.
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO webhooks (id, organization_id, url, events, enabled, secret, created_at, updated_at) VALUES (?, ?, 'https://hooks.example.com/x', '[\"*\"]', 0, 'whsec_AAAA', 0, 0)",
    ).bind(webhookId, organizationId),
    env.DB.prepare(
      "INSERT INTO webhook_deliveries (id, webhook_id, organization_id, event_id, event_type, payload, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'ticket.called', '{}', 'succeeded', 0, 0)",
    ).bind(deliveryId, webhookId, organizationId, `evt_${suffix()}`),
  ]);
  void lyon;
  return {
    owner,
    ids: {
      organizationId,
      locationId: paris,
      serviceId: service.id,
      queueId: queue.id,
      ticketId: ticket.id,
      deskId: desk.id,
      eventId: event.id,
      nfcId,
      id: qr.id,
      webhookId,
      deliveryId,
      userId: operator.id,
      keyId: key.id,
      invitationId: invitation.id,
      code: "done",
      label: "vip",
      templateKey: "ticket.called",
    },
    unknown: {
      organizationId: blank("org"),
      locationId: blank("loc"),
      serviceId: blank("svc"),
      queueId: blank("que"),
      ticketId: `tkt_${"0".repeat(40)}`,
      deskId: blank("dsk"),
      eventId: blank("evt"),
      nfcId: "04:unknown",
      id: blank("qrt"),
    },
  };
}

/** What the owner reads of the organization: equal before and after the probes. */
async function ownerView(v: Victim) {
  const token = v.owner.token;
  const headers = { "X-Organization-Id": v.ids.organizationId! };
  const ids = v.ids;
  const reads = [
    `/v1/organizations/${ids.organizationId}`,
    `/v1/organizations/${ids.organizationId}/members?limit=100`,
    `/v1/organizations/${ids.organizationId}/invitations?limit=100`,
    `/v1/organizations/${ids.organizationId}/api-keys?limit=100`,
    `/v1/organizations/${ids.organizationId}/webhooks?limit=100`,
    `/v1/organizations/${ids.organizationId}/labels`,
    `/v1/organizations/${ids.organizationId}/message-templates`,
    `/v1/billing/subscription/${ids.organizationId}`,
    `/v1/business/locations?limit=100`,
    `/v1/services/${ids.serviceId}`,
    `/v1/services/${ids.serviceId}/intake`,
    `/v1/services/${ids.serviceId}/outcomes`,
    `/v1/business/queues?limit=100`,
    `/v1/queues/${ids.queueId}/tickets?limit=100`,
    `/v1/desks/${ids.deskId}`,
    `/v1/business/calendar?startDate=2029-12-01&endDate=2030-02-01`,
    `/v1/nfc/tags/${encodeURIComponent(ids.nfcId!)}`,
    `/v1/qr-tokens?limit=100`,
  ];
  const view: Record<string, unknown> = {};
  for (const path of reads) {
    const res = await call("GET", path, { token, headers });
    view[path] = { status: res.status, data: stable(res.body?.data) };
  }
  return view;
}

/** Leaves out what moves by itself (clocks and estimates), so the comparison is about changes. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (/estimated|lastUsedAt|lastSeenAt|expiresAt|^stats$|averageWait/i.test(k)) continue;
      out[k] = stable(v);
    }
    return out;
  }
  return value;
}

function urlOf(op: ProbedOperation, values: Record<string, string>): string {
  return op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = values[name];
    if (value === undefined)
      throw new Error(`The probe has no value for {${name}} (${op.method} ${op.path}): add one to test/helpers/probe.ts`);
    return encodeURIComponent(value);
  });
}

function answer(res: ApiResponse) {
  return { status: res.status, code: res.body?.error?.code };
}

/**
 * Probes the operations of shard `shard` of `shards`. Each shard file builds its own
 * organizations (storage is per test file) and runs in parallel with the others.
 */
export function probeShard(shard: number, shards: number): void {
  let v: Victim;
  let outsider: TestUser;
  let scoped: TestUser;
  let mine: ProbedOperation[] = [];
  let before: Record<string, unknown>;

  beforeAll(async () => {
    const { probed, excluded, total } = await probedOperations();
    mine = probed.filter((op) => shardOf(op, shards) === shard);
    console.log(
      `probe shard ${shard + 1}/${shards}: ${mine.length} of ${probed.length} probed operations (of ${total} with a path id; excluded: ${Object.entries(
        excluded,
      )
        .map(([why, ops]) => `${ops.length} ${why}`)
        .join(", ")})`,
    );
    v = await victim();
    outsider = await registerUser();
    const otherOrg = (await createOrganization(outsider, { type: "banking" })).id;
    await setPlan(otherOrg, "pro");
    scoped = await registerUser();
    const lyon = expectOk(
      await call("GET", "/v1/business/locations?limit=100", {
        token: v.owner.token,
        headers: { "X-Organization-Id": v.ids.organizationId! },
      }),
    ).find((l: { name: string }) => l.name === "Lyon").id;
    expectOk(
      await call("POST", `/v1/organizations/${v.ids.organizationId}/members`, {
        token: v.owner.token,
        body: { email: scoped.email, role: "manager", locationIds: [lyon] },
      }),
      202,
    );
    await acceptInvitation(scoped, v.ids.organizationId!);
    before = await ownerView(v);
  });

  describe(`every operation with a path id, shard ${shard + 1} of ${shards}`, () => {
    it("covers at least one operation", () => {
      expect(mine.length).toBeGreaterThan(0);
    });

    it("another organization's owner and a member scoped to another location get the unknown id's 404", async () => {
      const failures: string[] = [];
      for (const op of mine) {
        const primary = op.params[0]!;
        const body = ["POST", "PUT", "PATCH"].includes(op.method) ? {} : undefined;
        const unknownValue = v.unknown[primary];
        const askers: [string, TestUser][] = [["another organization's owner", outsider]];
        if (LOCATION_SCOPED.has(primary)) askers.push(["a manager scoped to another location", scoped]);
        for (const [who, asker] of askers) {
          if (!op.params.every((name) => name in v.ids)) {
            failures.push(
              `${op.method} ${op.path}: the probe has no value for one of {${op.params.join("}, {")}}: add it to test/helpers/probe.ts`,
            );
            break;
          }
          const res = await call(op.method, urlOf(op, v.ids), { token: asker.token, ...(body ? { body } : {}) });
          const reference = unknownValue
            ? answer(
                await call(op.method, urlOf(op, { ...v.ids, [primary]: unknownValue }), { token: asker.token, ...(body ? { body } : {}) }),
              )
            : { status: 404, code: "NOT_FOUND" };
          if (res.status !== 404 || res.body?.error?.code !== "NOT_FOUND" || JSON.stringify(answer(res)) !== JSON.stringify(reference)) {
            failures.push(
              `${op.method} ${op.path} by ${who}: ${res.status} ${res.body?.error?.code ?? ""} (unknown id: ${reference.status} ${reference.code})`,
            );
          }
        }
      }
      expect(failures).toEqual([]);
    });

    it("nothing changed for the organization's owner", async () => {
      expect(await ownerView(v)).toEqual(before);
    });
  });
}
