import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LEDGER_MIGRATIONS, migrateLedger } from "../../src/ledger/schema";
import { ROOM_MIGRATIONS, migrateRoom } from "../../src/queue-room/schema";
import { room } from "../helpers/catalog";

// A room's schema steps run once each; a step that fails halfway must leave nothing behind, so
// the next start runs it again from a clean slate.

function tables(storage: DurableObjectStorage): string[] {
  return storage.sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .toArray()
    .map((r) => r.name);
}

function applied(storage: DurableObjectStorage): number {
  return storage.sql.exec<{ applied: number }>("SELECT applied FROM room_schema").one().applied;
}

describe("room schema steps", () => {
  it("a step that fails halfway leaves neither its tables nor its counter, and runs whole on the next start", async () => {
    const stub = room(`que_schema${Math.random().toString(36).slice(2, 12)}`);
    await runInDurableObject(stub, (_object, state) => {
      const storage = state.storage;
      expect(applied(storage)).toBe(ROOM_MIGRATIONS.length);
      const broken = [...ROOM_MIGRATIONS, "CREATE TABLE half_done (x INTEGER); INSERT INTO no_such_table VALUES (1);"];
      expect(() => migrateRoom(storage, broken)).toThrow(/no_such_table/);
      expect(tables(storage)).not.toContain("half_done");
      expect(applied(storage)).toBe(ROOM_MIGRATIONS.length);

      const fixed = [...ROOM_MIGRATIONS, "CREATE TABLE half_done (x INTEGER); INSERT INTO half_done VALUES (1);"];
      migrateRoom(storage, fixed);
      migrateRoom(storage, fixed);
      expect(applied(storage)).toBe(ROOM_MIGRATIONS.length + 1);
      expect(storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM half_done").one().n).toBe(1);
    });
  });
});

describe("ledger schema steps", () => {
  it("the organization ledger's storage follows numbered steps too; a ledger that predates them keeps its counts", async () => {
    const stub = env.ORG_LEDGER.getByName(`org_schema${Math.random().toString(36).slice(2, 12)}`);
    await runInDurableObject(stub, (_object, state) => {
      const storage = state.storage;
      const ledgerApplied = () => storage.sql.exec<{ applied: number }>("SELECT applied FROM ledger_schema").one().applied;
      expect(ledgerApplied()).toBe(LEDGER_MIGRATIONS.length);
      expect(tables(storage)).toEqual(expect.arrayContaining(["ledger_meta", "ticket_periods"]));

      // A ledger started before the steps existed: its tables, its counts, and no step counter.
      storage.sql.exec("INSERT INTO ticket_periods (period, used, flushed) VALUES ('2026-11', 7, 5)");
      storage.sql.exec("DROP TABLE ledger_schema");
      migrateLedger(storage);
      migrateLedger(storage);
      expect(ledgerApplied()).toBe(LEDGER_MIGRATIONS.length);
      expect(storage.sql.exec("SELECT period, used, flushed FROM ticket_periods").toArray()).toEqual([
        { period: "2026-11", used: 7, flushed: 5 },
      ]);
    });
  });
});
