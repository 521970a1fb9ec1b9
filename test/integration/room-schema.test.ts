import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
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
