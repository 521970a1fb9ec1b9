import { describe, expect, it } from "vitest";
import { call, fetchWorker, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { decodeEscpos } from "../helpers/escpos";
import { addMember, createApiKey, createOrganization, createQueueFixture, registerUser } from "../helpers/fixtures";

// GET /v1/tickets/{ticketId}/receipt (docs/receipts.md): the ESC/POS bytes a thermal printer
// takes, parsed by a decoder, and the 80 mm HTML receipt; readable with the ticket's token or by staff.

async function kioskTicket() {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking", name: "Banque Élan" });
  const f = await createQueueFixture(owner, org.id);
  expectOk(
    await call("PATCH", `/v1/locations/${f.locationId}`, {
      token: owner.token,
      body: { timezone: "Europe/Paris", name: "Agence Plateau" },
    }),
  );
  expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: owner.token, body: { name: "Opérations de caisse" } }));
  const widget = await createApiKey(owner, org.id, ["widget"]);
  testClock.set("2026-03-20T09:30:00.000Z");
  const joined = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: widget.key, body: {} }), 201);
  testClock.reset();
  return { owner, organizationId: org.id, f, widget, ticket: joined, token: joined.ticketToken as string };
}

async function fetchReceipt(ticketId: string, query: string, headers: Record<string, string> = {}) {
  return fetchWorker(`/v1/tickets/${ticketId}/receipt${query}`, { headers });
}

describe("ESC/POS receipt", () => {
  it("holds the centred double-size code, the service, the place, the local time, a QR of the status page, and is cut", async () => {
    const k = await kioskTicket();
    const res = await fetchReceipt(k.ticket.id, "?format=escpos&language=fr", { "X-Ticket-Token": k.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/octet-stream");
    const doc = decodeEscpos(new Uint8Array(await res.arrayBuffer()));

    expect(doc.commands[0]).toBe("init");
    expect(doc.commands.at(-1)).toBe("cut 66");
    expect(doc.codePage).toBe(16);
    // French prints as text in WPC1252: no raster image.
    expect(doc.images).toEqual([]);
    const code = doc.lines.find((l) => l.text === k.ticket.displayCode);
    expect(code).toMatchObject({ align: "centre", width: 2, height: 2 });
    const texts = doc.lines.map((l) => l.text);
    expect(texts).toContain("Banque Élan");
    expect(texts).toContain("Opérations de caisse");
    expect(texts).toContain("Agence Plateau");
    // 09:30 UTC is 10:30 in Paris in March.
    expect(texts).toContain("20 mars 2026, 10:30");
    expect(doc.qr).toEqual({
      model: 2,
      moduleSize: 6,
      errorCorrection: "M",
      data: `https://api.test/t/${k.ticket.id}#token=${k.token}`,
      printed: true,
    });
  });

  it("prints an Arabic ticket's Arabic lines as raster images (GS v 0), its code and time as text, nothing as '?'", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "banking", name: "بنك الأمل" });
    const f = await createQueueFixture(owner, org.id);
    expectOk(
      await call("PATCH", `/v1/locations/${f.locationId}`, {
        token: owner.token,
        body: { timezone: "Africa/Casablanca", name: "وكالة الرباط" },
      }),
    );
    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: owner.token, body: { name: "عمليات الصندوق" } }));
    const widget = await createApiKey(owner, org.id, ["widget"]);
    const ticket = expectOk(
      await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: widget.key, body: { language: "ar" } }),
      201,
    );
    const res = await fetchReceipt(ticket.id, "?language=ar", { "X-Ticket-Token": ticket.ticketToken });
    expect(res.status).toBe(200);
    const doc = decodeEscpos(new Uint8Array(await res.arrayBuffer()));

    // The organization, the label, the service, the place, "follow your turn" and "keep this ticket": six images.
    const kinds = doc.printed.map((p) => ("image" in p ? "image" : "qr" in p ? "qr" : p.line.text));
    expect(kinds).toEqual([
      "image",
      "image",
      ticket.displayCode,
      "",
      "image",
      "image",
      expect.stringMatching(/^\d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}$/),
      "",
      "image",
      "qr",
      "",
      "image",
    ]);
    for (const image of doc.images) {
      // The head's width (72 mm at 8 dots a millimetre), a line of print high, normal size, with ink on it.
      expect([image.width, image.mode]).toEqual([576, 0]);
      expect(image.height).toBeGreaterThanOrEqual(24);
      expect(image.height).toBeLessThanOrEqual(48);
      expect(image.data.some((byte) => byte !== 0)).toBe(true);
    }
    // The code stays text, left to right, in double size; no letter fell back to "?" and no label to English.
    expect(doc.lines.find((l) => l.text === ticket.displayCode)).toMatchObject({ width: 2, height: 2 });
    expect(doc.lines.filter((l) => l.text.includes("?"))).toEqual([]);
    expect(doc.lines.map((l) => l.text)).not.toContain("Your ticket");
    expect(doc.qr?.printed).toBe(true);
  });

  it("is read by staff without the token, then with no QR (the server keeps only the token's hash)", async () => {
    const k = await kioskTicket();
    const operator = await addMember(k.owner, k.organizationId, "operator");
    const res = await fetchReceipt(k.ticket.id, "", { Authorization: `Bearer ${operator.token}` });
    expect(res.status).toBe(200);
    const doc = decodeEscpos(new Uint8Array(await res.arrayBuffer()));
    expect(doc.lines.map((l) => l.text)).toContain(k.ticket.displayCode);
    expect(doc.lines.map((l) => l.text)).toContain("20 Mar 2026, 10:30");
    expect(doc.qr).toBeNull();
  });

  it("refuses a wrong token, no credential, a widget key, another organization and a bad format", async () => {
    const k = await kioskTicket();
    const path = `/v1/tickets/${k.ticket.id}/receipt`;
    expectError(await call("GET", path, { headers: { "X-Ticket-Token": "x".repeat(43) } }), 404, "NOT_FOUND");
    expectError(await call("GET", path), 401, "AUTHENTICATION_ERROR");
    expectError(await call("GET", path, { apiKey: k.widget.key }), 403, "AUTHORIZATION_ERROR");
    const stranger = await registerUser();
    await createOrganization(stranger);
    expectError(await call("GET", path, { token: stranger.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `${path}?format=pdf`, { token: k.owner.token }), 400, "VALIDATION_ERROR", "format");
  });
});

describe("HTML receipt", () => {
  it("is a page for 80 mm paper with the code, the service and the status page's QR as SVG", async () => {
    const k = await kioskTicket();
    const res = await fetchReceipt(k.ticket.id, "?format=html", { "X-Ticket-Token": k.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain('<html lang="en" dir="ltr">');
    expect(html).toContain("@page{size:80mm auto;margin:0}");
    expect(html).toMatch(/\.receipt\{width:72mm;/);
    expect(html).toContain(`<p class="code" data-code>${k.ticket.displayCode}</p>`);
    expect(html).toContain("Opérations de caisse");
    expect(html).toContain("20 Mar 2026, 10:30");
    expect(html).toMatch(/<div class="qr" role="img" aria-label="[^"]+"><svg /);
    // Nothing in it reaches out: no script, no external resource.
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
  });
});
