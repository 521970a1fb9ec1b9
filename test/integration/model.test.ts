import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { OPEN_RULES, room } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createOrganization, registerUser } from "../helpers/fixtures";

// Model-based test: random operation sequences run against a real QueueRoom (over RPC) and a
// tiny in-memory model written independently of src/domain; after every step the two must
// agree and the queue's invariants must hold.

type Status = "waiting" | "called" | "serving" | "served" | "skipped" | "expired" | "cancelled";
interface ModelTicket {
  id: string;
  number: number;
  status: Status;
  /** Joined as VIP: the flag the room answers as isPriority (a restore moves the lane, not the flag). */
  vip: boolean;
  priorityLane: boolean;
  order: number;
  assignedTo: string | null;
  recovered: boolean;
}

const ALLOWED: Record<string, Status[]> = {
  serve: ["called"],
  complete: ["serving"],
  skip: ["called"],
  cancel: ["waiting", "called"],
  present: ["waiting", "called"],
  recover: ["skipped", "expired"],
};

type Op =
  | { kind: "join"; vip: boolean }
  | { kind: "callNext"; operator: "op1" | "op2" }
  | { kind: "ticket"; action: keyof typeof ALLOWED; pick: number; option: "rejoin" | "restore" }
  | { kind: "expire" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("join" as const), vip: fc.boolean() }), weight: 4 },
  {
    arbitrary: fc.record({ kind: fc.constant("callNext" as const), operator: fc.constantFrom("op1" as const, "op2" as const) }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("ticket" as const),
      action: fc.constantFrom(...(Object.keys(ALLOWED) as (keyof typeof ALLOWED)[])),
      pick: fc.nat(),
      option: fc.constantFrom("rejoin" as const, "restore" as const),
    }),
    weight: 4,
  },
  { arbitrary: fc.constant({ kind: "expire" as const }), weight: 1 },
);

function line(model: ModelTicket[]): ModelTicket[] {
  return model.filter((t) => t.status === "waiting").sort((a, b) => Number(b.priorityLane) - Number(a.priorityLane) || a.order - b.order);
}

let runs = 0;

describe("QueueRoom against a model", () => {
  // A real organization: every join takes a unit of its monthly ledger (written to D1 after).
  let organizationId = "";
  beforeAll(async () => {
    organizationId = (await createOrganization(await registerUser())).id;
  });

  it("keeps numbers unique, positions gapless, priority first and every ticket in one state", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 30 }), async (ops) => {
        runs += 1;
        const queueId = `que_m0de1${String(runs).padStart(5, "0")}${Math.random().toString(36).slice(2, 12).padEnd(10, "0")}`;
        const stub = room(queueId);
        await stub.configure({
          queueId,
          organizationId,
          serviceId: "svc_model",
          letter: "M",
          maxCapacity: null,
          noShowTimeoutMinutes: 5,
          status: "active",
          archivedAt: null,
        });
        await stub.command({ verb: "applyRules", copy: OPEN_RULES });
        const model: ModelTicket[] = [];
        let prioritySeq = 0;
        let at = Date.UTC(2026, 0, 5, 9);

        for (const op of ops) {
          at += 1_000;
          // The room's alarm (drain, archive) reads the clock: keep it at the model's time, or a
          // ticket finished "in January" is archived at once by an alarm running in November.
          testClock.set(at);
          if (op.kind === "join") {
            const r = await stub.command({
              verb: "join",
              input: {
                userId: "usr_model",
                partySize: 1,
                isPriority: op.vip,
                isGhostMode: op.vip,
                visitorName: null,
                phone: null,
                language: null,
                source: op.vip ? "vip" : "app",
              },
              at,
              rulesVersion: OPEN_RULES.version,
            });
            expect(r.ok).toBe(true);
            if (!r.ok) return;
            const number = model.length + 1;
            expect(r.value.number).toBe(number);
            model.push({
              id: r.value.id,
              number,
              status: "waiting",
              vip: op.vip,
              priorityLane: op.vip,
              order: op.vip ? ++prioritySeq : number,
              assignedTo: null,
              recovered: false,
            });
          } else if (op.kind === "callNext") {
            const r = await stub.command({ verb: "callNext", operatorId: op.operator, at });
            const next = line(model)[0];
            if (!next) {
              expect(r).toMatchObject({ ok: false, error: { code: "QUEUE_EMPTY" } });
            } else {
              expect(r.ok && r.value.id).toBe(next.id);
              for (const t of model) if (t.status === "serving" && t.assignedTo === op.operator) t.status = "served";
              next.status = "called";
              next.assignedTo = op.operator;
            }
          } else if (op.kind === "expire") {
            at += 6 * 60_000;
            testClock.set(at);
            await stub.command({ verb: "expireDue", at });
            for (const t of model) if (t.status === "called") t.status = "expired";
          } else {
            if (model.length === 0) continue;
            const t = model[op.pick % model.length]!;
            const allowed = ALLOWED[op.action]!.includes(t.status) && !(op.action === "recover" && t.recovered);
            const r =
              op.action === "serve"
                ? await stub.command({ verb: "serve", ticketId: t.id, at })
                : op.action === "complete"
                  ? await stub.command({ verb: "complete", ticketId: t.id, at })
                  : op.action === "skip"
                    ? await stub.command({ verb: "skipAbsent", ticketId: t.id, reason: "absent", at })
                    : op.action === "cancel"
                      ? await stub.command({ verb: "cancel", ticketId: t.id, at })
                      : op.action === "present"
                        ? await stub.command({ verb: "present", ticketId: t.id, at })
                        : await stub.command({ verb: "recover", ticketId: t.id, option: op.option, at });
            expect(r.ok, `${op.action} from ${t.status}: ${JSON.stringify(r)}`).toBe(allowed);
            if (!r.ok) {
              expect((r as any).error.code).toBe("INVALID_STATE");
              continue;
            }
            if (op.action === "serve") t.status = "serving";
            if (op.action === "complete") t.status = "served";
            if (op.action === "skip") t.status = "skipped";
            if (op.action === "cancel") t.status = "cancelled";
            if (op.action === "recover") {
              t.recovered = true;
              if (op.option === "restore") {
                t.status = "waiting";
                t.priorityLane = true;
                t.order = ++prioritySeq;
                t.assignedTo = null;
              } else {
                const number = model.length + 1;
                expect(r.value).toMatchObject({ number, recoveredFromId: t.id, status: "waiting" });
                model.push({
                  id: r.value.id,
                  number,
                  status: "waiting",
                  vip: false,
                  priorityLane: false,
                  order: number,
                  assignedTo: null,
                  recovered: false,
                });
              }
            }
          }

          const listed = await stub.query({ question: "tickets", query: { status: null, offset: 0, limit: 1000 }, at });
          expect(listed.ok).toBe(true);
          if (!listed.ok) return;
          const items = listed.value.items;
          // nothing lost or invented, every ticket in exactly one (the model's) state and flag
          expect(items.map((i) => [i.id, i.status, i.isPriority])).toEqual(model.map((m) => [m.id, m.status, m.vip]));
          // numbers unique and consecutive
          expect(items.map((i) => i.number)).toEqual(model.map((_, k) => k + 1));
          // positions 1..n in the model's order, null for everyone not waiting
          const expectedLine = line(model);
          const byId = new Map(items.map((i) => [i.id, i]));
          expect(expectedLine.map((m) => byId.get(m.id)!.position)).toEqual(expectedLine.map((_, k) => k + 1));
          for (const i of items) if (i.status !== "waiting") expect(i.position).toBeNull();
          // The room's own line: priority (VIP, restored) strictly ahead of regular tickets, then
          // exactly the model's order, each ticket's position its rank.
          const waiting = await stub.query({ question: "tickets", query: { status: "waiting", offset: 0, limit: 1000 }, at });
          expect(waiting.ok).toBe(true);
          if (!waiting.ok) return;
          const roomLine = waiting.value.items;
          const modelOf = new Map(model.map((m) => [m.id, m]));
          const lanes = roomLine.map((i) => modelOf.get(i.id)!.priorityLane);
          expect(lanes).toEqual([...lanes].sort((a, b) => Number(b) - Number(a)));
          expect(roomLine.map((i) => i.id)).toEqual(expectedLine.map((m) => m.id));
          expect(roomLine.map((i) => i.position)).toEqual(roomLine.map((_, k) => k + 1));
        }
      }),
      { numRuns: 25 },
    );
    // 25 sequences of up to 30 room calls: about 6 s on a quiet machine, past the default 30 s
    // at load 22 (CI beside other work). The budget per file still bounds it.
  }, 120_000);
});
