import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk, fetchWorker } from "../helpers/api";
import { decodeEscpos } from "../helpers/escpos";
import { settle } from "../helpers/catalog";
import { createApiKey, queueFixture, type Fixture } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, smsSent, type Captured } from "../helpers/notifications";
import { fakeTwilio, randomMobile, replyOf, TWILIO, twilioPost } from "../helpers/twilio";
import { LANGUAGES } from "../../src/domain/languages";

// Issue 42, languages as data: a ticket speaks the language its visitor chose, any language of the
// catalogue (src/domain/languages), in its SMS, its keywords, its receipt and the board; a language
// outside the catalogue is refused naming the field.

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
  vi.restoreAllMocks();
});

let addressNo = 0;
const nextAddress = () => `203.0.113.${100 + (++addressNo % 150)}`;

async function widgetJoin(f: Fixture, key: string, body: Record<string, unknown>) {
  return call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: key, body, headers: { "CF-Connecting-IP": nextAddress() } });
}

describe("a ticket in the visitor's language", () => {
  it("a Spanish widget ticket is texted in Spanish (outbox and the Twilio double), its call too; ESTADO answers in Spanish", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const phone = randomMobile();
    const ticket = expectOk(await widgetJoin(f, key, { phone, language: "es" }), 201);

    // The outbox provider's delivery row: the created message in Spanish.
    expect((await smsSent(captured, f.queueId)).map((m) => m.body)).toEqual([
      `Está en la fila de Main line, posición 1, espera estimada ${ticket.estimatedWaitMinutes} min.`,
    ]);

    // Through Twilio: the call says the counter in Spanish.
    const sent = fakeTwilio();
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    await feedEvents(await eventsOf(captured, f.queueId), TWILIO);
    expect(sent.map((s) => [s.to, s.body])).toEqual([
      [phone, `Es su turno: Turno ${ticket.displayCode}: acérquese ahora a Test (Main line).`],
    ]);

    // ESTADO (Spanish and Portuguese): the reply is Spanish, the ticket being called.
    await settle(f.queueId);
    const reply = replyOf(await twilioPost({ From: phone, Body: "Estado" }));
    expect(reply).toBe(`${ticket.displayCode}: le están llamando.`);
  });

  it("a waiting ticket's ESTADO says its place in Spanish; AYUDA lists the Spanish words", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const phone = randomMobile();
    const ticket = expectOk(await widgetJoin(f, key, { phone, language: "es" }), 201);
    await settle(f.queueId);
    expect(replyOf(await twilioPost({ From: phone, Body: "ESTADO" }))).toMatch(
      new RegExp(`^${ticket.displayCode}: es el número 1 de la fila, unos \\d+ min\\.$`),
    );
    expect(replyOf(await twilioPost({ From: phone, Body: "ayuda" }))).toContain("ESTADO para su lugar, CANCELAR para salir de la fila");
    expect(replyOf(await twilioPost({ From: phone, Body: "CANCELAR" }))).toBe(`${ticket.displayCode}: su turno ha sido cancelado.`);
    expect(expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: f.owner.token })).status).toBe("cancelled");
  });

  it("an Arabic kiosk ticket: its SMS and its receipt are Arabic, the receipt page right to left", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const phone = randomMobile();
    const ticket = expectOk(await widgetJoin(f, key, { phone, language: "ar" }), 201);
    const [sms] = await smsSent(captured, f.queueId);
    expect(sms!.body).toBe(`أنت في طابور Main line، الترتيب 1، مدة الانتظار المتوقعة ${ticket.estimatedWaitMinutes} دقيقة.`);

    const res = await call("GET", `/v1/tickets/${ticket.id}/receipt?language=ar&format=html`, {
      headers: { "X-Ticket-Token": ticket.ticketToken },
    });
    expect(res.status).toBe(200);
    const html = typeof res.body === "string" ? res.body : JSON.stringify(res.body);
    expect(html).toContain('<html lang="ar" dir="rtl">');
    expect(html).toContain("تذكرتك");
    expect(html).toContain(ticket.displayCode);

    // The ESC/POS receipt: WPC1252 has no Arabic, so its labels print as raster images (test/integration/receipts.test.ts), and the date as text without bidi marks.
    const escpos = await fetchWorker(`/v1/tickets/${ticket.id}/receipt?language=ar&format=escpos`, {
      headers: { "X-Ticket-Token": ticket.ticketToken },
    });
    const doc = decodeEscpos(new Uint8Array(await escpos.arrayBuffer()));
    expect(doc.images.length).toBeGreaterThanOrEqual(3);
    expect(doc.lines.map((l) => l.text)).not.toContain("Your ticket");
    expect(doc.lines.map((l) => l.text)).toContainEqual(expect.stringMatching(/^\d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}$/));
  });

  it("a language outside the catalogue is a 400 naming the field, on every route that takes one", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    expectError(await widgetJoin(f, key, { language: "xx" }), 400, "VALIDATION_ERROR", "language");
    expectError(await widgetJoin(f, key, { language: "ES" }), 400, "VALIDATION_ERROR", "language");
    expectError(
      await call("PATCH", `/v1/organizations/${f.organizationId}`, { token: f.owner.token, body: { defaultLanguage: "klingon" } }),
      400,
      "VALIDATION_ERROR",
      "defaultLanguage",
    );
    expectError(
      await call("GET", `/v1/widget/board?organization=${f.organizationId}&key=${key}&language=xx`),
      400,
      "VALIDATION_ERROR",
      "language",
    );
  });

  it("the organization's default may be any catalogue language: Portuguese, and its widget offers every language", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const org = expectOk(
      await call("PATCH", `/v1/organizations/${f.organizationId}`, { token: f.owner.token, body: { defaultLanguage: "pt" } }),
    );
    expect(org.defaultLanguage).toBe("pt");
    const info = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/info`, { apiKey: key }));
    expect(info.defaultLanguage).toBe("pt");
    expect(info.languages).toEqual(LANGUAGES);
    // No language chosen: the organization's.
    const ticket = expectOk(await widgetJoin(f, key, { phone: randomMobile() }), 201);
    expect((await smsSent(captured, f.queueId)).map((m) => m.body)).toEqual([
      `Está na fila de Main line, posição 1, espera estimada ${ticket.estimatedWaitMinutes} min.`,
    ]);
  });

  it("the board page in Arabic is right to left, titled and worded in Arabic, and speaks with an Arabic voice", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const res = await call("GET", `/v1/widget/board?organization=${f.organizationId}&key=${key}&language=ar`);
    expect(res.status).toBe(200);
    const html = String(res.body);
    expect(html).toContain('<html lang="ar" dir="rtl">');
    expect(html).toContain("<title>شاشة النداء</title>");
    expect(html).toContain('data-locale="ar-MA"');
    expect(html).toContain('data-dir="rtl"');
    expect(html).toContain("لا يوجد نداء حاليا");
  });

  it("a board with voices=fr,en,ar carries each voice's words and locale in order; a fourth, unknown or repeated language is a 400 naming voices", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const board = (query: string) => call("GET", `/v1/widget/board?organization=${f.organizationId}&key=${key}${query}`);
    const res = await board("&language=fr&voices=fr,en,ar");
    expect(res.status).toBe(200);
    const attribute = /data-voices="([^"]*)"/.exec(String(res.body))?.[1] ?? "";
    const voices = JSON.parse(attribute.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&amp;", "&"));
    expect(voices.map((v: any) => [v.language, v.locale, v.name])).toEqual([
      ["fr", "fr-FR", "Français"],
      ["en", "en-GB", "English"],
      ["ar", "ar-MA", "العربية"],
    ]);
    expect(voices.map((v: any) => v.say)).toEqual([
      "Numéro {code}, {counter}",
      "Ticket {code}, {counter}",
      expect.stringContaining("التذكرة {code}"),
    ]);
    // Without voices: the board's own language only.
    const own = /data-voices="([^"]*)"/.exec(String((await board("&language=es")).body))?.[1] ?? "";
    expect(JSON.parse(own.replaceAll("&quot;", '"')).map((v: any) => v.language)).toEqual(["es"]);
    for (const bad of ["fr,en,ar,es", "fr,xx", "fr,fr", "FR", ""]) {
      expectError(await board(`&voices=${bad}`), 400, "VALIDATION_ERROR", "voices");
    }
  });
});
