import { beforeAll, describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { addMember, addQueue, type Fixture, queueFixture } from "../helpers/fixtures";
import { sweep } from "../helpers/cron";

// Every row of the CONTRACT §4 table, and every operation refused from every other status.

type Status = "waiting" | "called" | "serving" | "served" | "skipped" | "expired" | "cancelled";
const STATUSES: Status[] = ["waiting", "called", "serving", "served", "skipped", "expired", "cancelled"];

let f: Fixture;
let operator: { id: string; token: string };
let spare: string;

beforeAll(async () => {
  f = await queueFixture("pro");
  operator = await addMember(f.owner, f.organizationId, "operator");
  spare = await addQueue(f);
});

/** A fresh queue holding one ticket in `status`. */
async function ticketIn(status: Status): Promise<{ queueId: string; ticketId: string }> {
  const token = f.owner.token;
  const queueId = await addQueue(f);
  const t = expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token }), 201);
  const post = async (name: string, body?: unknown) => expectOk(await call("POST", `/v1/tickets/${t.id}/${name}`, { token, body }));
  if (status === "waiting") return { queueId, ticketId: t.id };
  if (status === "cancelled") {
    await post("cancel");
    return { queueId, ticketId: t.id };
  }
  expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { token }));
  if (status === "serving" || status === "served") await post("serve");
  if (status === "served") await post("complete");
  if (status === "skipped") await post("skip-absent", { reason: "not here" });
  if (status === "expired") {
    const at = Date.parse(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token })).calledAt);
    await settle(queueId);
    await sweep(at + 5 * 60_000);
  }
  const now = expectOk(await call("GET", `/v1/tickets/${t.id}`, { token }));
  expect(now.status).toBe(status);
  return { queueId, ticketId: t.id };
}

interface Operation {
  name: string;
  allowed: Status[];
  body?: () => unknown;
  /** The status the ticket has afterwards, or a check of the answer. */
  check: (data: any, ticketId: string) => void | Promise<void>;
}

const OPERATIONS: Operation[] = [
  { name: "present", allowed: ["waiting", "called"], check: (d) => expect(d.presentAt).not.toBeNull() },
  { name: "serve", allowed: ["called"], check: (d) => expect(d).toMatchObject({ status: "serving", servingAt: expect.any(String) }) },
  { name: "complete", allowed: ["serving"], check: (d) => expect(d).toMatchObject({ status: "served", servedAt: expect.any(String) }) },
  {
    name: "skip-absent",
    allowed: ["called"],
    body: () => ({ reason: "absent" }),
    check: (d) => expect(d).toMatchObject({ status: "skipped", skipReason: "absent" }),
  },
  { name: "cancel", allowed: ["waiting", "called"], check: (d) => expect(d.status).toBe("cancelled") },
  {
    name: "recover",
    allowed: ["skipped", "expired"],
    body: () => ({ recoveryOption: "restore" }),
    check: (d) => expect(d).toMatchObject({ status: "waiting", position: 1 }),
  },
  {
    name: "transfer-queue",
    allowed: ["waiting", "called"],
    body: () => ({ targetQueueId: spare, prioritize: true }),
    check: async (d, ticketId) => {
      expect(d).toMatchObject({ queueId: spare, status: "waiting", isPriority: true, source: "transfer" });
      const old = expectOk(await call("GET", `/v1/tickets/${ticketId}`, { token: f.owner.token }));
      expect(old).toMatchObject({ status: "cancelled", transferredToId: d.id });
    },
  },
  {
    name: "transfer",
    allowed: ["called", "serving"],
    body: () => ({ targetOperatorId: operator.id }),
    check: (d) => expect(d.assignedToId).toBe(operator.id),
  },
];

describe.each(OPERATIONS)("$name", (op) => {
  it.each(STATUSES)("from %s", async (status) => {
    const { ticketId } = await ticketIn(status);
    const res = await call("POST", `/v1/tickets/${ticketId}/${op.name}`, { token: f.owner.token, body: op.body?.() });
    if (op.allowed.includes(status)) {
      const data = expectOk(res);
      await op.check(data, ticketId);
    } else {
      expectError(res, 409, "INVALID_STATE");
      expect(res.body.error.details).toEqual({ status, allowed: op.allowed });
    }
  });
});

describe("call-next", () => {
  it("moves waiting to called with calledAt and the caller, and only waiting tickets are called", async () => {
    for (const status of ["called", "serving", "served", "skipped", "expired", "cancelled"] as Status[]) {
      const { queueId } = await ticketIn(status);
      expectError(await call("POST", `/v1/queues/${queueId}/call-next`, { token: operator.token }), 409, "QUEUE_EMPTY");
    }
    const { queueId, ticketId } = await ticketIn("waiting");
    const called = expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { token: operator.token }));
    expect(called).toMatchObject({ id: ticketId, status: "called", assignedToId: operator.id, position: null });
    expect(called.calledAt).toMatch(/Z$/);
  });

  it("auto-completes the caller's serving ticket", async () => {
    const { queueId, ticketId } = await ticketIn("serving");
    expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token: f.owner.token }), 201);
    expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { token: f.owner.token }));
    expect(expectOk(await call("GET", `/v1/tickets/${ticketId}`, { token: f.owner.token })).status).toBe("served");
  });
});

describe("recover rejoin and no-show expiry", () => {
  it("rejoin leaves the old ticket and adds a new one at the back, once", async () => {
    const { queueId, ticketId } = await ticketIn("skipped");
    const other = expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token: f.owner.token }), 201);
    const fresh = expectOk(
      await call("POST", `/v1/tickets/${ticketId}/recover`, { token: f.owner.token, body: { recoveryOption: "rejoin" } }),
    );
    expect(fresh).toMatchObject({
      status: "waiting",
      recoveredFromId: ticketId,
      source: "recovery",
      number: other.number + 1,
      position: 2,
    });
    expect(expectOk(await call("GET", `/v1/tickets/${ticketId}`, { token: f.owner.token })).status).toBe("skipped");
    const again = await call("POST", `/v1/tickets/${ticketId}/recover`, { token: f.owner.token, body: { recoveryOption: "rejoin" } });
    expectError(again, 409, "INVALID_STATE");
    expect(again.body.error.details.recoveredToId).toBe(fresh.id);
  });

  it("a called ticket expires only once its 5 minutes are up", async () => {
    testClock.set("2026-05-04T10:00:00.000Z");
    const queueId = await addQueue(f);
    const t = expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token: f.owner.token }), 201);
    expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { token: f.owner.token }));
    await settle(queueId);
    await sweep(Date.parse("2026-05-04T10:04:59.999Z"));
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("called");
    await sweep(Date.parse("2026-05-04T10:05:00.000Z"));
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("expired");
  });
});
