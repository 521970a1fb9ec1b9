import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk, fetchWorker } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { capture, smsSent, type Captured } from "../helpers/notifications";
import { addQueue, createApiKey, queueFixture, walkIn, type Fixture } from "../helpers/fixtures";
import { customerText, fakeTwilio, randomMobile } from "../helpers/twilio";
import { LANGUAGES, type Language } from "../../src/domain/languages";

// Issue 45: USSD in the session-callback style of Africa's Talking. Each screen within 160
// characters in French and English; a join appears in the queue's listing with its channel;
// refusals are screens; a wrong secret changes nothing; a code of organization B never reaches
// organization A's tickets.

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
  vi.restoreAllMocks();
});

const randomAddress = () => `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
const randomCode = () => `*384*${Math.floor(Math.random() * 1e6)}#`;
/** An Ivorian mobile (+225 07…), new each time: the per-number SMS join cap is 3 a day. */
const randomPhone = () => `+22507${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`;

interface Registered {
  serviceCode: string;
  secret: string;
}

async function registerCode(f: Fixture, body: Record<string, unknown> = {}): Promise<Registered> {
  const serviceCode = randomCode();
  const data = expectOk(
    await call("PUT", `/v1/organizations/${f.organizationId}/ussd`, { token: f.owner.token, body: { serviceCode, ...body } }),
  );
  expect(data.serviceCode).toBe(serviceCode);
  expect(data.secret).toMatch(/^ussd_/);
  return { serviceCode, secret: data.secret };
}

interface Dial {
  status: number;
  text: string;
}

/** The aggregator's callback for one screen of a session. */
async function dial(
  code: Registered,
  phoneNumber: string,
  text: string,
  opts: { sessionId?: string; secret?: string | null; address?: string; viaHeader?: boolean } = {},
): Promise<Dial> {
  const secret = opts.secret === undefined ? code.secret : opts.secret;
  const query = secret !== null && !opts.viaHeader ? `?secret=${encodeURIComponent(secret)}` : "";
  const headers: Record<string, string> = {
    "Content-Type": "application/x-www-form-urlencoded",
    "CF-Connecting-IP": opts.address ?? randomAddress(),
  };
  if (secret !== null && opts.viaHeader) headers["X-USSD-Secret"] = secret;
  const res = await fetchWorker(`/v1/inbound/ussd${query}`, {
    method: "POST",
    headers,
    body: new URLSearchParams({
      sessionId: opts.sessionId ?? `ATUid_${crypto.randomUUID()}`,
      serviceCode: code.serviceCode,
      phoneNumber,
      text,
    }).toString(),
  });
  return { status: res.status, text: await res.text() };
}

/** A screen answered 200, text/plain, CON or END, at most 160 characters. */
function screen(d: Dial): string {
  expect(d.status, d.text).toBe(200);
  expect(d.text).toMatch(/^(CON|END) /);
  expect(d.text.length, d.text).toBeLessThanOrEqual(160);
  return d.text;
}

const listing = async (f: Fixture, queueId = f.queueId) =>
  expectOk(await call("GET", `/v1/queues/${queueId}/tickets`, { token: f.owner.token })) as any[];

/** What each language's screens say, in part: the catalogue's `ussd` words (src/domain/languages). */
const WORDS = {
  fr: {
    take: "1 Prendre un ticket",
    choose: "Choisissez une file",
    none: "Aucun ticket",
    arrive: "À votre arrivée",
    already: "déjà",
    position: /n°\d+ dans la file/,
    here: "vous êtes là",
    confirm: /^CON Annuler le ticket/,
    kept: "conservé",
    cancelled: "annulé",
    invalid: "Choix invalide",
  },
  en: {
    take: "1 Take a ticket",
    choose: "Choose a line",
    none: "No ticket",
    arrive: "When you arrive",
    already: "already",
    position: /number \d+ in line/,
    here: "you are here",
    confirm: /^CON Cancel ticket/,
    kept: "kept",
    cancelled: "cancelled",
    invalid: "Invalid choice",
  },
  es: {
    take: "1 Sacar un turno",
    choose: "Elija una fila",
    none: "Ningún turno",
    arrive: "Al llegar",
    already: "Ya tiene",
    position: /n\.º \d+ en la fila/,
    here: "está aquí",
    confirm: /^CON ¿Anular el turno/,
    kept: "Conserva",
    cancelled: "anulado",
    invalid: "Opción no válida",
  },
  pt: {
    take: "1 Tirar senha",
    choose: "Escolha uma fila",
    none: "Nenhuma senha",
    arrive: "Ao chegar",
    already: "Já tem",
    position: /n\.º \d+ na fila/,
    here: "sabe que chegou",
    confirm: /^CON Cancelar a senha/,
    kept: "mantém-se",
    cancelled: "cancelada",
    invalid: "Opção inválida",
  },
  ar: {
    take: "1 أخذ تذكرة",
    choose: "اختر طابورا",
    none: "لا توجد تذكرة",
    arrive: "عند وصولك",
    already: "بالفعل",
    position: /رقم \d+ في الطابور/,
    here: "أنك هنا",
    confirm: /^CON إلغاء التذكرة/,
    kept: "الاحتفاظ",
    cancelled: "تم إلغاء",
    invalid: "اختيار غير صالح",
  },
  nl: {
    take: "1 Neem een ticket",
    choose: "Kies een rij",
    none: "Geen ticket",
    arrive: "Bij aankomst",
    already: "U hebt al",
    position: /nummer \d+ in de rij/,
    here: "dat u er bent",
    confirm: /^CON Ticket A-\d{3} annuleren/,
    kept: "behouden",
    cancelled: "geannuleerd",
    invalid: "Ongeldige keuze",
  },
  de: {
    take: "1 Ticket ziehen",
    choose: "Wählen Sie eine Warteschlange",
    none: "Kein Ticket",
    arrive: "Bei Ankunft",
    already: "Sie haben schon",
    position: /Nr\. \d+ in der Warteschlange/,
    here: "dass Sie da sind",
    confirm: /^CON Ticket A-\d{3} stornieren/,
    kept: "bleibt bestehen",
    cancelled: "storniert",
    invalid: "Ungültige Auswahl",
  },
} as const satisfies Record<Language, unknown>;

async function setLanguage(f: Fixture, defaultLanguage: "fr" | "en") {
  expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}`, { token: f.owner.token, body: { defaultLanguage } }));
}

describe("USSD menus (issue 45)", () => {
  // Seven languages, eleven screens each (about 70 requests and ten queues): 24 s on the quiet
  // 2-core machine, past the 30 s default under load, so it has a longer timeout of its own.
  it("every screen of every flow is within 160 characters, in each language of the catalogue ('0*n' picks the n-th)", async () => {
    const f = await queueFixture("pro");
    await setLanguage(f, "fr");
    expectOk(
      await call("PATCH", `/v1/organizations/${f.organizationId}`, {
        token: f.owner.token,
        body: { name: "Mairie de la commune de Yopougon, service de l'état civil et des affaires" },
      }),
    );
    // Long names and many queues: the list shows what fits.
    for (let i = 0; i < 10; i++) await addQueue(f, { name: `Guichet ${i} des cartes nationales d'identité et passeports` });
    const code = await registerCode(f);

    // The "0" screen lists the offered languages in their own names, the default first.
    const languages = screen(await dial(code, randomPhone(), "0"));
    expect(languages).toBe("CON 1 Français\n2 English\n3 العربية\n4 Deutsch\n5 Español\n6 Nederlands\n7 Português");
    // French (the default) first, then every other language of the catalogue as `0*n` picks it.
    for (const [prefix, w] of LANGUAGES.map((language, i) => [i === 0 ? "" : `0*${i + 1}*`, WORDS[language]] as const)) {
      const main = screen(await dial(code, randomPhone(), prefix.replace(/\*$/, "")));
      expect(main).toMatch(/^CON /);
      expect(main, prefix).toContain(w.take);
      expect(main, prefix).toMatch(/\n0 \S/);
      const list = screen(await dial(code, randomPhone(), `${prefix}1`));
      expect(list).toMatch(/^CON /);
      expect(list).toContain(w.choose);
      expect(list).toContain("\n1 ");

      const phone = randomPhone();
      expect(screen(await dial(code, phone, `${prefix}2`))).toContain(w.none);
      const joined = screen(await dial(code, phone, `${prefix}1*1`));
      expect(joined).toMatch(/^END \S+ A-\d{3}/);
      expect(joined).toContain(w.arrive);
      await settle(f.queueId);
      expect(screen(await dial(code, phone, `${prefix}1*1`))).toContain(w.already);
      expect(screen(await dial(code, phone, `${prefix}2`))).toMatch(w.position);
      expect(screen(await dial(code, phone, `${prefix}3`))).toContain(w.here);
      expect(screen(await dial(code, phone, `${prefix}4`))).toMatch(w.confirm);
      expect(screen(await dial(code, phone, `${prefix}4*2`))).toContain(w.kept);
      expect(screen(await dial(code, phone, `${prefix}4*1`))).toContain(w.cancelled);
      await settle(f.queueId);
      expect(screen(await dial(code, phone, `${prefix}3`))).toContain(w.none);
      expect(screen(await dial(code, phone, `${prefix}7`))).toContain(w.invalid);
      expect(screen(await dial(code, phone, `${prefix}1*9*9`))).toMatch(/^END /);
    }
  }, 120_000);

  it("speaks the organization's default language, lists only the languages it offers, and the ticket keeps the one chosen", async () => {
    const f = await queueFixture("pro");
    expectOk(
      await call("PATCH", `/v1/organizations/${f.organizationId}`, {
        token: f.owner.token,
        body: { name: "Banco do Povo", languages: ["pt", "ar"], defaultLanguage: "pt" },
      }),
    );
    const code = await registerCode(f);
    expect(screen(await dial(code, randomPhone(), ""))).toBe(
      "CON Banco do Povo\n1 Tirar senha\n2 A minha posição\n3 Já cheguei\n4 Cancelar a senha\n0 العربية",
    );
    expect(screen(await dial(code, randomPhone(), "0"))).toBe("CON 1 Português\n2 العربية");
    expect(screen(await dial(code, randomPhone(), "0*2"))).toBe(
      "CON Banco do Povo\n1 أخذ تذكرة\n2 موقعي\n3 أنا هنا\n4 إلغاء تذكرتي\n0 Português",
    );
    // A number past the list, or not a digit, is an invalid choice in the default language.
    expect(screen(await dial(code, randomPhone(), "0*3"))).toContain(WORDS.pt.invalid);
    expect(screen(await dial(code, randomPhone(), "0*x*1"))).toContain(WORDS.pt.invalid);

    const phone = randomPhone();
    captured = capture();
    const joined = screen(await dial(code, phone, "0*2*1*1"));
    expect(joined).toMatch(/^END التذكرة A-\d{3} \(Main line\): رقم 1، حوالي \d+ دقيقة\. عند وصولك، اطلب \*384\*\d+# ثم 3\.$/);
    await settle(f.queueId);
    const [ticket] = await listing(f);
    expect(ticket.source).toBe("ussd");
    // Every later message of the ticket speaks the language chosen on the phone.
    expect((await smsSent(captured, f.queueId)).map((m) => m.body)).toEqual([expect.stringMatching(/^أنت في طابور Main line/)]);
    // The default language's screens then answer about the same ticket.
    expect(screen(await dial(code, phone, "2"))).toBe(
      `END ${ticket.displayCode}: n.º 1 na fila, cerca de ${ticket.estimatedWaitMinutes ?? "?"} min.`,
    );
  });

  it("a join by USSD is a ticket of the queue with its channel, refusals such as a full queue are a screen", async () => {
    const f = await queueFixture("pro", { maxCapacity: 2 });
    const code = await registerCode(f);
    const phone = randomPhone();
    const sessionId = `ATUid_${crypto.randomUUID()}`;
    expect(screen(await dial(code, phone, "", { sessionId }))).toMatch(/^CON /);
    expect(screen(await dial(code, phone, "1", { sessionId }))).toContain("Main line");
    const joined = screen(await dial(code, phone, "1*1", { sessionId }));
    // The aggregator's retry of the same screen acts once.
    expect(screen(await dial(code, phone, "1*1", { sessionId }))).toMatch(/^END /);
    await settle(f.queueId);
    const tickets = await listing(f);
    expect(tickets).toHaveLength(1);
    expect(tickets[0].source).toBe("ussd");
    expect(joined).toContain(tickets[0].displayCode);
    const one = expectOk(await call("GET", `/v1/tickets/${tickets[0].id}`, { token: f.owner.token }));
    expect(one.phoneMasked).toMatch(/•/);
    const messages = expectOk(await call("GET", `/v1/tickets/${tickets[0].id}/messages`, { token: f.owner.token })) as any[];
    expect(messages.map((m) => m.channel)).toEqual(["ussd", "ussd"]);

    await walkIn(f.owner, f.queueId);
    const refused = screen(await dial(code, randomPhone(), "1*1"));
    expect(refused).toMatch(/^END /);
    expect(refused).toContain("the line is full");
    await settle(f.queueId);
    expect(await listing(f)).toHaveLength(2);
  });

  it("a wrong, missing or other organization's secret, or an address not listed, is 401 and changes nothing", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const codeA = await registerCode(a);
    const codeB = await registerCode(b);
    const phone = randomPhone();
    screen(await dial(codeA, phone, "1*1"));
    await settle(a.queueId);
    const [ticket] = await listing(a);

    for (const secret of ["ussd_wrong", null, codeB.secret]) {
      const res = await dial(codeA, phone, "4*1", { secret });
      expect(res.status).toBe(401);
      expect(JSON.parse(res.text).error.code).toBe("AUTHENTICATION_ERROR");
      expect((await dial(codeA, randomPhone(), "1*1", { secret })).status).toBe(401);
    }
    expect((await dial({ serviceCode: randomCode(), secret: codeA.secret }, phone, "2")).status).toBe(401);
    await settle(a.queueId);
    expect(await listing(a)).toHaveLength(1);
    expect(expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: a.owner.token })).status).toBe("waiting");

    // The header works like the query; an allow-list refuses other addresses.
    expect(screen(await dial(codeA, phone, "2", { viaHeader: true }))).toContain(ticket.displayCode);
    const listed = expectOk(
      await call("PUT", `/v1/organizations/${a.organizationId}/ussd`, {
        token: a.owner.token,
        body: { serviceCode: codeA.serviceCode, allowedAddresses: ["192.0.2.10"] },
      }),
    );
    const again = { serviceCode: codeA.serviceCode, secret: listed.secret };
    expect((await dial(codeA, phone, "2")).status).toBe(401); // the old secret is gone
    expect((await dial(again, phone, "4*1", { address: "192.0.2.11" })).status).toBe(401);
    expect(screen(await dial(again, phone, "2", { address: "192.0.2.10" }))).toContain(ticket.displayCode);
    expect(expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: a.owner.token })).status).toBe("waiting");
  });

  it("a join by USSD and a join by text are on the desk's console line, and once called on the display board", async () => {
    fakeTwilio();
    const f = await queueFixture("pro");
    const code = await registerCode(f);
    const word = `GUICHET${Math.floor(Math.random() * 1e6)}`;
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { smsKeyword: word } }));
    const number = `+3375${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    await env.DB.prepare("INSERT INTO sms_senders (number, organization_id, created_at) VALUES (?, ?, ?)")
      .bind(number, f.organizationId, Date.now())
      .run();
    const link = await env.DB.prepare("SELECT location_id FROM service_locations WHERE service_id = ?")
      .bind(f.serviceId)
      .first<{ location_id: string }>();
    const desk = expectOk(
      await call("POST", `/v1/locations/${link!.location_id}/desks`, {
        token: f.owner.token,
        body: { name: "Desk 1", displayName: "Guichet 1", queueIds: [f.queueId] },
      }),
      201,
    );

    screen(await dial(code, randomPhone(), "1*1"));
    expect(await customerText(randomMobile(), word, number)).toMatch(/number 2 in line|n°2/);
    await settle(f.queueId);
    const console1 = expectOk(await call("GET", `/v1/desks/${desk.id}/console`, { token: f.owner.token }));
    const line = console1.waiting.map((t: any) => t.source);
    expect(line).toEqual(["ussd", "sms"]);
    const [byUssd, byText] = console1.waiting;

    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    for (const expected of [byUssd, byText]) {
      expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id).toBe(expected.id);
      await settle(f.queueId);
      const board = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/display-board`, { apiKey: key }));
      expect(board.queues[0].called.map((c: any) => c.displayCode)).toContain(expected.displayCode);
    }
  });

  it("organization B's code never reaches organization A's ticket of the same phone", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const codeA = await registerCode(a);
    const codeB = await registerCode(b);
    const phone = randomPhone();
    const joined = screen(await dial(codeA, phone, "1*1"));
    await settle(a.queueId);
    const [atA] = await listing(a);
    expect(joined).toContain(atA.displayCode);

    expect(screen(await dial(codeB, phone, "2"))).toContain("No ticket");
    expect(screen(await dial(codeB, phone, "3"))).toContain("No ticket");
    expect(screen(await dial(codeB, phone, "4"))).toContain("No ticket");
    expect(screen(await dial(codeB, phone, "4*1"))).toContain("No ticket");
    // B's list shows B's queues only, and joining there makes a ticket at B.
    expect(screen(await dial(codeB, phone, "1"))).not.toContain(atA.displayCode);
    screen(await dial(codeB, phone, "1*1"));
    await settle(b.queueId);
    expect(await listing(b)).toHaveLength(1);
    const atANow = expectOk(await call("GET", `/v1/tickets/${atA.id}`, { token: a.owner.token }));
    expect(atANow.status).toBe("waiting");
    expect(atANow.presentAt).toBeNull();
    expect(await listing(a)).toHaveLength(1);
    expect((await expectOk(await call("GET", `/v1/tickets/${atA.id}/messages`, { token: a.owner.token }))).length).toBe(2);
  });

  it("registering a code: owner/admin only, one organization per code, read back without its secret", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const code = await registerCode(a);
    const reader = await createApiKey(a.owner, a.organizationId, ["read"]);
    expectError(
      await call("PUT", `/v1/organizations/${a.organizationId}/ussd`, { apiKey: reader.key, body: { serviceCode: randomCode() } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("PUT", `/v1/organizations/${b.organizationId}/ussd`, { token: b.owner.token, body: { serviceCode: code.serviceCode } }),
      409,
      "CONFLICT",
      "serviceCode",
    );
    expectError(
      await call("PUT", `/v1/organizations/${b.organizationId}/ussd`, { token: b.owner.token, body: { serviceCode: "123" } }),
      400,
      "VALIDATION_ERROR",
      "serviceCode",
    );
    expectError(await call("GET", `/v1/organizations/${b.organizationId}/ussd`, { token: a.owner.token }), 404, "NOT_FOUND");
    const read = expectOk(await call("GET", `/v1/organizations/${a.organizationId}/ussd`, { token: a.owner.token }));
    expect(read).toMatchObject({ serviceCode: code.serviceCode, allowedAddresses: null });
    expect(read.secret).toBeUndefined();
    expectOk(await call("DELETE", `/v1/organizations/${a.organizationId}/ussd`, { token: a.owner.token }));
    expect((await dial(code, randomPhone(), "")).status).toBe(401);
    const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM ussd_codes WHERE organization_id = ?")
      .bind(a.organizationId)
      .first<{ n: number }>();
    expect(row!.n).toBe(0);
  });
});
