import worker from "../../src/index";
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { exportPageQuery } from "../../src/analytics/analytics-export";
import { now } from "../../src/lib/clock";
import { call, fetchWorker, expectError, expectOk } from "../helpers/api";
import { insertLocation, insertService, settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createApiKey, queueFixture, setPlan } from "../helpers/fixtures";
import { bookAppointment } from "../helpers/booked-appointments";
import { depsOf } from "../../src/http/deps";

// GET /v1/analytics/export.csv: one row per ticket, RFC 4180, UTF-8 with a BOM, formula
// injection neutralised, times with the location's offset, anonymised rows without names.

const DAY = 86_400_000;

/**
 * An RFC 4180 reader written for this test (not the code under test): quoted fields may hold
 * commas, CRLF and doubled quotes; records end with CRLF.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (ch === '"') {
        quoted = false;
        i += 1;
      } else {
        field += ch;
        i += 1;
      }
    } else if (ch === '"' && field === "") {
      quoted = true;
      i += 1;
    } else if (ch === ",") {
      record.push(field);
      field = "";
      i += 1;
    } else if (ch === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i += 2;
    } else if (ch === '"' || ch === "\r" || ch === "\n") {
      throw new Error(`not RFC 4180 at ${i}: ${JSON.stringify(text.slice(Math.max(0, i - 20), i + 20))}`);
    } else {
      field += ch;
      i += 1;
    }
  }
  if (field !== "" || record.length > 0) throw new Error("the last record does not end with CRLF");
  return records;
}

async function download(path: string, apiKey: string): Promise<{ res: Response; bytes: Uint8Array; text: string }> {
  const res = await fetchWorker(path, { headers: { "X-API-Key": apiKey } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { res, bytes, text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
}

function rowsOf(text: string): Record<string, string>[] {
  const [header, ...rest] = parseCsv(text.replace(/^\uFEFF/, ""));
  return rest.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
}

describe("GET /v1/analytics/export.csv", () => {
  it("streams one RFC 4180 row per ticket with a BOM, quoting, formula neutralising, local offsets and outcomes", async () => {
    testClock.set("2026-03-28T23:30:00.000Z"); // Paris: 00:30 (+01:00) on the night clocks go forward
    const f = await queueFixture("pro");
    const headers = { "X-Organization-Id": f.organizationId };
    const paris = await insertLocation(f.organizationId, "Europe/Paris");
    const serviceId = await insertService(f.organizationId, paris);
    const queueId = expectOk(
      await call("POST", "/v1/business/queues", { token: f.owner.token, headers, body: { serviceId, name: 'Desk "A", main' } }),
      201,
    ).id;
    const { key } = await createApiKey(f.owner, f.organizationId, ["admin"]);
    const names = ['Smith, "Bob"', '=HYPERLINK("http://x")', "Semi; colon", "@SUM(1+1)", "-2+3", "+33 6 12", "Zoë 東京"];
    const ids: string[] = [];
    for (const visitorName of names) {
      testClock.advance(1); // one millisecond apart: the export is in creation order
      ids.push(expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { apiKey: key, body: { visitorName } }), 201).id);
    }
    // First: called 10 min after joining (01:40 local, still +01:00), served from 03:10 +02:00.
    testClock.advance(10 * 60_000);
    expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { apiKey: key }));
    testClock.set("2026-03-29T01:10:00.000Z");
    expectOk(await call("POST", `/v1/tickets/${ids[0]}/serve`, { apiKey: key }));
    testClock.advance(6 * 60_000);
    expectOk(await call("POST", `/v1/tickets/${ids[0]}/complete`, { apiKey: key }));
    // Second: called, then skipped (a no-show); third: cancelled.
    expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { apiKey: key }));
    expectOk(await call("POST", `/v1/tickets/${ids[1]}/skip-absent`, { apiKey: key }));
    expectOk(await call("POST", `/v1/tickets/${ids[2]}/cancel`, { apiKey: key }));
    await settle(queueId);

    const { res, bytes, text } = await download(`/v1/analytics/export.csv?from=2026-03-28&to=2026-03-29&queueId=${queueId}`, key);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="tickets-[0-9TZ]+-[0-9TZ]+\.csv"$/);
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);

    const rows = rowsOf(text);
    expect(rows.map((r) => r.ticketId)).toEqual(ids);
    // Quoting and formula neutralising, read back by an independent parser.
    expect(rows.map((r) => r.visitorName)).toEqual([
      'Smith, "Bob"',
      '\'=HYPERLINK("http://x")',
      "Semi; colon",
      "'@SUM(1+1)",
      "'-2+3",
      "'+33 6 12",
      "Zoë 東京",
    ]);
    expect(rows[0]).toMatchObject({
      queueId,
      queueName: 'Desk "A", main',
      serviceId,
      locationId: paris,
      displayCode: "A-001",
      createdAt: "2026-03-29T00:30:00.001+01:00",
      calledAt: "2026-03-29T00:40:00.007+01:00",
      servedAt: "2026-03-29T03:16:00.000+02:00",
      waitMinutes: "10",
      serviceMinutes: "6",
      channel: "operator",
      status: "served",
      outcome: "served",
      desk: "",
      ghost: "true",
    });
    expect(rows[0]!.operatorId).not.toBe("");
    expect(rows[1]).toMatchObject({ status: "skipped", outcome: "no_show", servedAt: "", serviceMinutes: "" });
    expect(rows[2]).toMatchObject({ status: "cancelled", outcome: "cancelled", calledAt: "", waitMinutes: "" });
    expect(rows[3]).toMatchObject({ status: "waiting", outcome: "open" });

    // Outside the range: nothing but the header.
    const empty = await download(`/v1/analytics/export.csv?from=2026-04-01&to=2026-04-02&queueId=${queueId}`, key);
    expect(parseCsv(empty.text.replace(/^\uFEFF/, ""))).toHaveLength(1);

    // Anonymised after the retention period: the same rows, no name left.
    expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}`, { apiKey: key, body: { dataRetentionDays: 7 } }));
    testClock.advance(8 * DAY);
    const ctx = createExecutionContext();
    await worker.scheduled!(createScheduledController({ scheduledTime: now(), cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const after = await download(`/v1/analytics/export.csv?from=2026-03-28&to=2026-03-29&queueId=${queueId}`, key);
    const anonymised = rowsOf(after.text);
    expect(anonymised.map((r) => r.ticketId)).toEqual(ids);
    expect(anonymised.every((r) => r.visitorName === "")).toBe(true);
    for (const name of ["Smith", "HYPERLINK", "Semi", "SUM", "Zoë", "東京"]) expect(after.text).not.toContain(name);
  });

  it("pages through more tickets than one page, in creation order, each once", async () => {
    testClock.set("2026-05-10T08:00:00.000Z");
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["read:analytics"]);
    // 4,500 tickets straight into the projection (as the drain writes them), several per millisecond.
    const base = now();
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4500)
       INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size,
         is_priority, is_ghost_mode, source, created_at, updated_at, version)
       SELECT 'tkt_${f.queueId.slice(4)}p' || printf('%011d', i), ?1, ?2, ?3, 'usr_x', i, 'A-' || i, 'served', 1, 0, 0, 'app',
         ?4 + (i / 3), ?4 + (i / 3), 1 FROM n`,
    )
      .bind(f.queueId, f.serviceId, f.organizationId, base)
      .run();
    const { res, text } = await download(`/v1/analytics/export.csv?from=2026-05-10&to=2026-05-11&queueId=${f.queueId}`, key);
    expect(res.status).toBe(200);
    const rows = rowsOf(text);
    expect(rows).toHaveLength(4500);
    expect(new Set(rows.map((r) => r.ticketId)).size).toBe(4500);
    const order = rows.map((r) => `${r.createdAt}|${r.ticketId}`);
    expect(order).toEqual([...order].sort());
    expect(rows[0]).toMatchObject({ channel: "app", ghost: "false", createdAt: "2026-05-10T08:00:00.000+00:00" });
  });

  it("a page is one range read of the (organization, created_at) index", async () => {
    const page = exportPageQuery(depsOf(env), "org_x", { timeZone: "UTC", queueIds: [], from: 0, to: 1 }, { at: 0, id: "" }).toSQL();
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${page.sql}`)
      .bind(...page.params)
      .all<{ detail: string }>();
    const detail = plan.results.map((r) => r.detail).join(" | ");
    expect(detail).toMatch(/SEARCH tickets USING INDEX tickets_org_created_idx \(organization_id=\? AND created_at>\? AND created_at<\?\)/);
    expect(detail).not.toMatch(/SCAN tickets/);
  });

  it("says each ticket's kind, an appointment's time and how early or late it was checked in (minutes from the start)", async () => {
    testClock.set("2026-06-10T09:00:00.000Z");
    const f = await queueFixture("pro");
    const paris = await insertLocation(f.organizationId, "Europe/Paris");
    const serviceId = await insertService(f.organizationId, paris);
    const headers = { "X-Organization-Id": f.organizationId };
    const queueId = expectOk(
      await call("POST", "/v1/business/queues", { token: f.owner.token, headers, body: { serviceId, name: "Clinic" } }),
      201,
    ).id;
    const { key } = await createApiKey(f.owner, f.organizationId, ["admin"]);
    const start = Date.parse("2026-06-10T09:30:00.000Z");
    const early = await bookAppointment({ auth: { token: f.owner.token }, serviceId, locationId: paris, startAt: start });
    const late = await bookAppointment({ auth: { token: f.owner.token }, serviceId, locationId: paris, startAt: start });
    const walkIn = expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { apiKey: key, body: {} }), 201).id;
    testClock.set(start - 10 * 60_000);
    const e = expectOk(await call("POST", `/v1/appointments/${early.id}/check-in`, { apiKey: key }), 201).ticket.id;
    testClock.set(start + 5 * 60_000);
    const l = expectOk(await call("POST", `/v1/appointments/${late.id}/check-in`, { apiKey: key }), 201).ticket.id;
    await settle(queueId);

    const { text } = await download(`/v1/analytics/export.csv?from=2026-06-10&to=2026-06-11&queueId=${queueId}`, key);
    const rows = new Map(rowsOf(text).map((r) => [r.ticketId, r]));
    expect(rows.get(walkIn)).toMatchObject({ kind: "walk_in", appointmentAt: "", checkInMinutes: "" });
    expect(rows.get(e)).toMatchObject({ kind: "appointment", appointmentAt: "2026-06-10T11:30:00.000+02:00", checkInMinutes: "-10" });
    expect(rows.get(l)).toMatchObject({ kind: "appointment", appointmentAt: "2026-06-10T11:30:00.000+02:00", checkInMinutes: "5" });
  });

  it("same gate as analytics: starter is 402, a range over a year 400, a session without ANALYTICS_VIEW 403", async () => {
    const f = await queueFixture("starter");
    const { key } = await createApiKey(f.owner, f.organizationId, ["read:analytics"]);
    const starter = await call("GET", "/v1/analytics/export.csv?from=2026-01-01&to=2026-01-31", { apiKey: key });
    expectError(starter, 402, "PLAN_REQUIRED");
    await setPlan(f.organizationId, "pro");
    expectError(
      await call("GET", "/v1/analytics/export.csv?from=2025-01-01&to=2026-06-01", { apiKey: key }),
      400,
      "VALIDATION_ERROR",
      "to",
    );
    const { key: queuesOnly } = await createApiKey(f.owner, f.organizationId, ["read:queues"]);
    expectError(
      await call("GET", "/v1/analytics/export.csv?from=2026-01-01&to=2026-01-31", { apiKey: queuesOnly }),
      403,
      "AUTHORIZATION_ERROR",
    );
  });
});
