// Browser flows of the pages (docs/pages.md): the counter console, the kiosk, the visitor's status
// page and the floor view, against the dev Worker with the demo organization (scripts/seed.mjs).
// Run by `npm run test:browser` (test/browser/run.mjs calls runPageSuite against the Worker it
// starts), or alone against a running `npm run dev`:
//   node test/browser/pages.mjs --api=http://127.0.0.1:8787 [--update-screenshots] [--only=words]
import { spawnSync } from "node:child_process";
import { readFileSync, mkdirSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { chromium } from "playwright-core";
import { DEMO } from "../../scripts/seed.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const STEP_MS = 15_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function apiCall(api, method, pathname, body, headers = {}) {
  const res = await fetch(`${api}/v1${pathname}`, {
    method,
    headers: { "X-API-Key": DEMO.apiKey.value, ...(body ? { "Content-Type": "application/json" } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(STEP_MS),
  });
  const json = await res.json();
  return { status: res.status, ...json };
}

async function must(api, method, pathname, body, headers) {
  const res = await apiCall(api, method, pathname, body, headers);
  check(res.success, `${method} ${pathname} → ${res.status} ${JSON.stringify(res.error)}`);
  return res.data;
}

/**
 * Moves the dev server's clock (scripts/dev-worker.ts, POST /__dev/clock: {advanceMs} or {reset: true})
 * and, with a page, the page's clock (Playwright's page.clock) by the same amount: waits, targets and
 * alerts are tested without waiting for real time, and a read of the server agrees with the page.
 */
async function moveClocks(api, page, ms) {
  const res = await fetch(`${api}/__dev/clock`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(ms === "reset" ? { reset: true } : { advanceMs: ms }),
    signal: AbortSignal.timeout(STEP_MS),
  });
  check(res.ok, `POST /__dev/clock → ${res.status} ${await res.text()}`);
  if (page && ms !== "reset") await page.clock.fastForward(ms);
}

/** The demo's starting point: desks closed, the demo queue empty, one outcome on the service. */
async function resetDemo(api) {
  // npm run dev creates the demo queue and desks once the Worker answers: wait for them.
  let desks = [];
  // Minutes, not seconds, on a loaded machine (the dev start makes them after the Worker first answers).
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
    const listed = await apiCall(api, "GET", `/locations/${DEMO.location.id}/desks`);
    desks = listed.success ? listed.data : [];
    if (desks.length >= 2) break;
  }
  check(desks.length >= 2, "the demo desks were not created (scripts/dev.mjs ensureDemoDesks)");
  for (const desk of desks) if (desk.status === "open") await must(api, "POST", `/desks/${desk.id}/close`);
  await must(api, "POST", `/queues/${DEMO.queue.id}/clear`);
  for (const status of ["called", "serving", "held"]) {
    for (const t of await must(api, "GET", `/queues/${DEMO.queue.id}/tickets?status=${status}&limit=100`)) {
      if (status === "called") await apiCall(api, "POST", `/tickets/${t.id}/skip-absent`, { reason: "test reset" });
      if (status === "held") await apiCall(api, "POST", `/tickets/${t.id}/resume`, {});
      if (status !== "called") {
        await apiCall(api, "POST", `/tickets/${t.id}/serve`);
        await apiCall(api, "POST", `/tickets/${t.id}/complete`, {});
      }
    }
  }
  const outcomes = await must(api, "GET", `/services/${DEMO.service.id}/outcomes`);
  if (!outcomes.some((o) => o.code === "deposit_made"))
    await must(api, "POST", `/services/${DEMO.service.id}/outcomes`, { code: "deposit_made", label: "Dépôt effectué" });
  // One optional intake question, so the console's card has an answer to show (the kiosk asks it; the visitor may skip it).
  await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REASON_QUESTION] });
  // The flows join with a phone on every run, from one address, against the same local D1: the day's caps must not refuse them.
  await must(api, "PATCH", `/organizations/${DEMO.organization.id}/sms-policy`, { perPhonePerDay: 1000, perAddressPerDay: 100000 });
  return desks;
}

const REASON_QUESTION = {
  key: "reason",
  label: { fr: "Motif de la visite", en: "Reason for the visit" },
  type: "select",
  options: [
    { value: "account", label: { fr: "Ouvrir un compte", en: "Open an account" } },
    { value: "card", label: { fr: "Problème de carte", en: "Card issue" } },
  ],
  required: "never",
};

async function widgetJoin(api, body = {}) {
  return must(api, "POST", `/widget/queue/${DEMO.queue.id}/join`, body, { "X-API-Key": DEMO.widgetKey.value });
}

/** Runs axe-core in the page; answers the serious and critical violations. */
async function axe(page) {
  // Evaluated over the DevTools protocol, so the page's CSP (scripts of its own origin only) stays on.
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  return result;
}

async function checkAxe(page, what) {
  // A new call flashes for 3 s (opacity .3 at its middle): axe judges the colours at rest, as a
  // visitor who asked for reduced motion sees them (the widget stops the flash then).
  await page.emulateMedia({ reducedMotion: "reduce" });
  const violations = await axe(page);
  await page.emulateMedia({ reducedMotion: null });
  check(violations.length === 0, `axe on ${what}: ${violations.join(" | ")}`);
}

async function signIn(page, api, who) {
  await page.goto(`${api}/console`, { timeout: STEP_MS });
  await page.getByLabel(/^(Email|E-mail)$/).fill(who.email, { timeout: STEP_MS });
  await page.getByLabel(/^(Password|Mot de passe)$/).fill(who.password);
  await page.getByRole("button", { name: /^(Sign in|Se connecter)$/ }).click();
}

async function openDesk(page, name) {
  await page.getByRole("button", { name: new RegExp(name) }).click({ timeout: STEP_MS });
  await page.getByRole("button", { name: /Call next|Appeler le suivant/ }).waitFor({ timeout: STEP_MS });
  await page.waitForSelector('[data-live="live"]', { timeout: STEP_MS });
  // The shortcuts wait for the desk's first read (the buttons are disabled while a verb runs).
  await page.waitForSelector('button[aria-keyshortcuts="N"]:not([disabled])', { timeout: STEP_MS });
}

const currentCode = (page) => page.evaluate(() => document.querySelector(".current .ticket .code")?.firstChild?.textContent ?? null);
const waitingCodes = (page) =>
  page.evaluate(() => [...document.querySelectorAll(".line tbody .code-cell")].map((c) => c.firstChild?.textContent));

/** A slot of the demo service starting soon (booking opened for it), booked through the API as a customer would. */
async function bookSoon(api, name) {
  await must(api, "PATCH", `/services/${DEMO.service.id}`, {
    booking: {
      enabled: true,
      durationMinutes: 15,
      slotStepMinutes: 15,
      capacityPerSlot: 50,
      leadTimeMinutes: 0,
      checkInOpensMinutes: 240,
      lateGraceMinutes: 120,
    },
  });
  const from = new Date().toISOString();
  const to = new Date(Date.now() + 4 * 3_600_000).toISOString();
  const slots = await must(api, "GET", `/services/${DEMO.service.id}/slots?locationId=${DEMO.location.id}&from=${from}&to=${to}`);
  const slot = slots.find((s) => s.remaining > 0);
  check(slot, "no free slot of the demo service in the next 4 hours");
  return must(api, "POST", "/appointments", {
    serviceId: DEMO.service.id,
    locationId: DEMO.location.id,
    start: slot.start,
    customer: { name, language: "en" },
  });
}

/** A question the visitor must answer to take a ticket (issue 39). */
const REQUIRED_REASON = { ...REASON_QUESTION, required: "at_join" };

const kioskUrl = (api, lang, extra = "") => `${api}/kiosk?location=${DEMO.location.id}&key=${DEMO.widgetKey.value}&lang=${lang}${extra}`;

/**
 * The SMS bodies the outbox provider recorded for a ticket (its delivery rows in the local D1 of
 * `npm run dev`, read with wrangler as an operator would), waiting up to `ms` for the first.
 */
async function outboxSms(ticketId, ms = 60_000) {
  const wrangler = path.join(root, "node_modules", ".bin", "wrangler");
  const sql = `SELECT payload FROM notification_deliveries WHERE channel = 'sms' AND payload LIKE '%${ticketId}%'`;
  for (const deadline = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 1000))) {
    const run = spawnSync(wrangler, ["d1", "execute", "DB", "--local", "--json", "--command", sql], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    });
    const rows = run.status === 0 ? (JSON.parse(run.stdout)[0]?.results ?? []) : [];
    if (rows.length > 0 || Date.now() > deadline) return rows.map((r) => JSON.parse(r.payload).body);
  }
}

/** A USB receipt printer in the page (navigator.usb), recording what it is sent; and print() counted. */
function stubUsbPrinter(paired) {
  const sent = [];
  const requested = [];
  let isPaired = paired;
  const device = {
    productName: "Stub TM-T20",
    opened: false,
    configuration: null,
    async open() {
      this.opened = true;
    },
    async selectConfiguration(value) {
      this.configuration = {
        configurationValue: value,
        interfaces: [
          {
            interfaceNumber: 0,
            claimed: false,
            alternate: {
              interfaceClass: 7,
              endpoints: [
                { endpointNumber: 1, direction: "in", type: "bulk" },
                { endpointNumber: 2, direction: "out", type: "bulk" },
              ],
            },
          },
        ],
      };
    },
    async claimInterface(n) {
      this.configuration.interfaces[n].claimed = true;
    },
    async transferOut(endpoint, data) {
      const view = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      sent.push({ endpoint, claimed: this.configuration?.interfaces[0].claimed ?? false, bytes: Array.from(view) });
      return { status: "ok", bytesWritten: view.byteLength };
    },
  };
  Object.defineProperty(Navigator.prototype, "usb", {
    configurable: true,
    get: () => ({
      getDevices: async () => (isPaired ? [device] : []),
      requestDevice: async (options) => {
        requested.push(options);
        isPaired = true;
        return device;
      },
    }),
  });
  window.usbSent = sent;
  window.usbRequested = requested;
  window.printed = 0;
  window.print = () => {
    window.printed += 1;
  };
}

/** A second branch of the demo organization with its own queue (created once, found again on later runs). */
const SECOND = { location: "Demo Bank Bastille", service: "Teller Bastille", queue: "Bastille line" };
async function secondBranch(api) {
  const locations = await must(api, "GET", "/business/locations?limit=100");
  let location = locations.find((l) => l.name === SECOND.location);
  if (!location)
    location = await must(api, "POST", "/locations", {
      organizationId: DEMO.organization.id,
      name: SECOND.location,
      address: "4 place de la Bastille, 75011 Paris",
      latitude: 48.853,
      longitude: 2.369,
      timezone: "Europe/Paris",
    });
  const services = await must(api, "GET", "/business/services?limit=100");
  let service = services.find((s) => s.name === SECOND.service);
  if (!service)
    service = await must(api, "POST", "/services", {
      name: SECOND.service,
      locationIds: [location.id],
      serviceTypeId: DEMO.service.serviceTypeId,
    });
  const queues = await must(api, "GET", `/business/queues?serviceId=${service.id}`);
  const queue =
    queues.find((q) => q.name === SECOND.queue) ??
    (await must(api, "POST", "/business/queues", { serviceId: service.id, name: SECOND.queue }));
  return { location, service, queue };
}

/** The demo service takes appointments round the clock (the demo location has no hours), check-in opening `opensMinutes` before. */
async function bookable(api, opensMinutes) {
  await must(api, "PATCH", `/services/${DEMO.service.id}`, {
    booking: {
      enabled: true,
      durationMinutes: 30,
      slotStepMinutes: 30,
      capacityPerSlot: 50,
      leadTimeMinutes: 0,
      horizonDays: 14,
      checkInOpensMinutes: opensMinutes,
    },
  });
}

/** Books (over the API, as the widget would) the first free slot starting between `fromMinutes` and `toMinutes` from now. */
async function bookAhead(api, fromMinutes, toMinutes) {
  const from = new Date(Date.now() + fromMinutes * 60_000).toISOString();
  const to = new Date(Date.now() + toMinutes * 60_000).toISOString();
  const headers = { "X-API-Key": DEMO.widgetKey.value };
  const slots = await must(
    api,
    "GET",
    `/services/${DEMO.service.id}/slots?locationId=${DEMO.location.id}&from=${from}&to=${to}`,
    null,
    headers,
  );
  const slot = slots.find((s) => s.remaining > 0 && Date.parse(s.start) >= Date.parse(from));
  check(slot, `no free slot between ${from} and ${to}`);
  const body = {
    serviceId: DEMO.service.id,
    locationId: DEMO.location.id,
    start: slot.start,
    customer: { name: "Léa Martin", language: "fr" },
  };
  return must(api, "POST", "/appointments", body, headers);
}

/** A shop's page embedding the widget in booking mode, served from another origin than the API (a port of 127.0.0.1). */
async function openBookingWidget(page, api, lang) {
  const config = { type: "book", locationId: DEMO.location.id, apiKey: DEMO.widgetKey.value, language: lang, apiBase: api };
  await openWidget(page, api, lang, config, "book");
}

/** A shop's page embedding the widget (`config`), served from another origin than the API (a port of 127.0.0.1). */
async function openWidget(page, api, lang, config, where) {
  const html = `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>Demo Bank — ${lang === "fr" ? "Rendez-vous" : "Appointments"}</title>
<style>body{font-family:system-ui,sans-serif;margin:0;background:#f3f4f6}main{max-width:460px;margin:32px auto;padding:0 16px}</style></head>
<body><main><h1>Demo Bank</h1><div id="widget"></div></main>
<script>window.QueueWidgetConfig = ${JSON.stringify(config)};</script><script async src="${api}/v1/embed.js"></script></body></html>`;
  const server = http.createServer((_, res) => res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(html));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  page.once("close", () => server.close());
  await page.goto(`http://127.0.0.1:${server.address().port}/${where}`, { timeout: STEP_MS });
}

/**
 * Books the first free time in the widget with the keyboard only: Tab and Enter through the day
 * and the slot, the details typed; answers {id, code, manage}. `shots` names screenshot files per step.
 */
async function bookInWidget(page, api, lang, { axe: withAxe = false, shot = null } = {}) {
  const fr = lang === "fr";
  await openBookingWidget(page, api, lang);
  const heading = page.locator("#widget h3");
  await heading.filter({ hasText: fr ? "Choisissez un jour" : "Choose a day" }).waitFor({ timeout: STEP_MS });
  if (withAxe) await checkAxe(page, "the widget's days");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await heading.filter({ hasText: fr ? "Choisissez un horaire" : "Choose a time" }).waitFor({ timeout: STEP_MS });
  if (shot) await shot("slots");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await heading.filter({ hasText: fr ? "Vos coordonnées" : "Your details" }).waitFor({ timeout: STEP_MS });
  // The messages' language: the languages the business offers (the demo: the whole catalogue), each in its own name (issue 42).
  const languages = page.locator("#widget select[name=language]");
  const names = await languages.locator("option").allTextContents();
  check(names.join(",") === "Français,English,العربية,Deutsch,Español,Nederlands,Português", `the booking's languages: ${names}`);
  check((await languages.inputValue()) === lang, `the booking's language starts at ${await languages.inputValue()}`);
  if (withAxe) await checkAxe(page, "the widget's details");
  // An empty name is refused in the page's words, at the field.
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  const missing = await page.locator("#widget #bk-name-err").textContent({ timeout: STEP_MS });
  check(missing === (fr ? "Merci d'indiquer votre nom." : "Please enter your name."), `empty name: ${missing}`);
  await page.keyboard.type(fr ? "Léa Martin" : "Ada Lovelace");
  await page.keyboard.press("Tab");
  await page.keyboard.type("+33612345678");
  if (shot) await shot("details");
  await page.keyboard.press("Enter");
  await heading.filter({ hasText: fr ? "Votre rendez-vous est réservé" : "Your appointment is booked" }).waitFor({ timeout: STEP_MS });
  if (withAxe) await checkAxe(page, "the widget's confirmation");
  if (shot) await shot("confirmation");
  const id = await page.locator("#widget [data-appointment]").getAttribute("data-appointment");
  const code = await page.locator("#widget [data-code]").textContent();
  const manage = await page.locator("#widget [data-manage]").getAttribute("href");
  check(/^apt_/.test(id ?? "") && /^[0-9A-Z]{6}$/.test(code ?? ""), `the confirmation: ${id} ${code}`);
  return { id, code, manage };
}

export function pageCases() {
  return [
    {
      name: "pages flow 1: console signs in and opens a desk; a kiosk ticket appears live; call-next shortcut; the board shows and speaks the call; the visitor's page says your turn; complete with an outcome",
      async run({ browser, api, figures }) {
        await resetDemo(api);
        const clerk = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        const kiosk = await browser.newContext({ viewport: { width: 768, height: 1024 }, locale: "en-GB" });
        const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "en-GB", isMobile: true, hasTouch: true });
        const screen = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          // The waiting room's call screen, with a spy on speech installed before it loads.
          const board = await screen.newPage();
          await board.addInitScript(() => {
            window.utterances = [];
            SpeechSynthesis.prototype.speak = function (u) {
              window.utterances.push({ text: u.text, lang: u.lang });
              setTimeout(() => u.onend?.(new Event("end")), 300);
            };
          });
          await board.goto(`${api}/v1/widget/board?organization=${DEMO.organization.id}&key=${DEMO.widgetKey.value}&language=en&kiosk=1`, {
            timeout: STEP_MS,
          });
          await board.getByText(DEMO.queue.name).first().waitFor({ timeout: STEP_MS });
          await checkAxe(board, "the display board");

          const console_ = await clerk.newPage();
          await signIn(console_, api, DEMO.operator);
          await openDesk(console_, "Guichet 1");
          await checkAxe(console_, "the console");

          const k = await kiosk.newPage();
          // The demo branch speaks French (scripts/seed.mjs): this visitor switches to English.
          await k.goto(`${api}/kiosk?location=${DEMO.location.id}&key=${DEMO.widgetKey.value}&lang=en`, { timeout: STEP_MS });
          await checkAxe(k, "the kiosk");
          await k.getByLabel(/Your name/).fill("Ada");
          const joined = k.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await k.getByRole("button", { name: /Guichet/ }).click();
          // The service's optional question: skipped.
          await k.getByRole("button", { name: "Take a ticket" }).click({ timeout: STEP_MS });
          const ticket = (await (await joined).json()).data;
          const issuedAt = Date.now();
          await k.getByText(ticket.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });
          const qr = await k.locator(".qr svg").count();
          check(qr === 1, "the kiosk shows no QR code");

          // The console shows the new ticket without a reload.
          await console_.waitForFunction(
            (code) => [...document.querySelectorAll(".line tbody .code-cell")].some((c) => c.textContent.startsWith(code)),
            ticket.displayCode,
            {
              timeout: STEP_MS,
            },
          );
          figures.kioskToConsoleMs = Date.now() - issuedAt;
          check(figures.kioskToConsoleMs <= 1000, `the console showed the kiosk's ticket after ${figures.kioskToConsoleMs} ms (> 1 s)`);

          const visitor = await phone.newPage();
          await visitor.goto(`${api}/t/${ticket.id}#token=${ticket.ticketToken}`, { timeout: STEP_MS });
          await visitor.getByText(ticket.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });
          await visitor.getByText(/You are next|before you/).waitFor({ timeout: STEP_MS });
          await checkAxe(visitor, "the status page");

          await console_.keyboard.press("n");
          await console_.waitForFunction(
            (code) => document.querySelector(".current .ticket .code")?.textContent?.startsWith(code),
            ticket.displayCode,
            {
              timeout: STEP_MS,
            },
          );
          await visitor.getByText("It's your turn").waitFor({ timeout: STEP_MS });
          await visitor.getByText("Please go to Guichet 1").waitFor({ timeout: STEP_MS });
          // The board shows the call and says it aloud, in its language.
          const number = String(Number(ticket.displayCode.split("-")[1]));
          await board.waitForFunction((n) => window.utterances.some((u) => u.text.includes(` ${n},`)), number, { timeout: STEP_MS });
          const said = await board.evaluate(() => window.utterances);
          check(
            said.some((u) => u.text.includes(`A ${number}`) && u.text.includes("Guichet 1") && u.lang.startsWith("en")),
            `the board said ${JSON.stringify(said)}`,
          );
          await board.getByText(ticket.displayCode).first().waitFor({ timeout: STEP_MS });

          await console_.keyboard.press("s");
          await console_.getByText("being served").waitFor({ timeout: STEP_MS });
          await console_.keyboard.press("c");
          await console_.getByLabel("Outcome").selectOption("deposit_made", { timeout: STEP_MS });
          await console_.getByLabel("Note").fill("Brought the form");
          await console_.getByRole("button", { name: "Complete the ticket" }).click();
          await console_.getByText("No customer at the desk").waitFor({ timeout: STEP_MS });
          const done = await must(api, "GET", `/tickets/${ticket.id}`);
          check(
            done.status === "served" && done.outcome === "deposit_made" && done.note === "Brought the form",
            `ticket after complete: ${JSON.stringify(done)}`,
          );
          await visitor.getByText("Thank you for your visit").waitFor({ timeout: STEP_MS });
        } finally {
          await Promise.all([clerk.close(), kiosk.close(), phone.close(), screen.close()]);
        }
      },
    },
    {
      name: "pages flow 2: two consoles on two desks press call-next at the same moment and show two different tickets",
      async run({ browser, api }) {
        await resetDemo(api);
        const a = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const b = await browser.newContext({ viewport: { width: 768, height: 1024 } });
        try {
          const [pa, pb] = [await a.newPage(), await b.newPage()];
          await signIn(pa, api, DEMO.operator);
          await openDesk(pa, "Guichet 1");
          await signIn(pb, api, DEMO.owner);
          await openDesk(pb, "Guichet 2");
          const t1 = await widgetJoin(api);
          const t2 = await widgetJoin(api);
          for (const p of [pa, pb])
            await p.waitForFunction(() => document.querySelectorAll(".line tbody .code-cell").length >= 2, null, { timeout: STEP_MS });
          await Promise.all([pa.keyboard.press("n"), pb.keyboard.press("n")]);
          for (const p of [pa, pb]) await p.waitForSelector(".current .ticket .code", { timeout: STEP_MS });
          const [ca, cb] = [await currentCode(pa), await currentCode(pb)];
          check(ca && cb && ca !== cb, `the two consoles show ${ca} and ${cb}`);
          check(
            [t1.displayCode, t2.displayCode].sort().join() === [ca, cb].sort().join(),
            `called ${ca}, ${cb}; issued ${t1.displayCode}, ${t2.displayCode}`,
          );
        } finally {
          await Promise.all([a.close(), b.close()]);
        }
      },
    },
    {
      name: "pages flow 3: the console goes offline and back, says so, and shows a ticket taken meanwhile",
      async run({ browser, api }) {
        await resetDemo(api);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        try {
          const p = await ctx.newPage();
          await signIn(p, api, DEMO.operator);
          await openDesk(p, "Guichet 1");
          await ctx.setOffline(true);
          await p.getByText("Connection lost — reconnecting…").first().waitFor({ timeout: STEP_MS });
          const meanwhile = await widgetJoin(api, { visitorName: "Grace" });
          await new Promise((r) => setTimeout(r, 500));
          check(!(await waitingCodes(p)).includes(meanwhile.displayCode), "the offline console already shows the new ticket");
          await ctx.setOffline(false);
          await p.waitForFunction(
            (code) => [...document.querySelectorAll(".line tbody .code-cell")].some((c) => c.textContent.startsWith(code)),
            meanwhile.displayCode,
            {
              timeout: STEP_MS,
            },
          );
          await p.getByText("Connection back: the list is up to date.").waitFor({ timeout: STEP_MS });
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages flow 4: the console's verbs by keyboard: VIP walk-in, recall, the previous call's fate (absent), hold and resume, transfer to a colleague",
      async run({ browser, api }) {
        await resetDemo(api);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        try {
          const p = await ctx.newPage();
          await signIn(p, api, DEMO.operator);
          await openDesk(p, "Guichet 1");
          await p.keyboard.press("w");
          await p.getByLabel("Customer's name (optional)").fill("Walk In");
          await p.getByLabel("VIP (served first)").check();
          await p.getByRole("button", { name: "Add the ticket" }).click();
          await p.getByRole("cell", { name: "Walk In" }).waitFor({ timeout: STEP_MS });
          const regular = await widgetJoin(api, { visitorName: "Regular" });
          await p.getByRole("cell", { name: "Regular" }).waitFor({ timeout: STEP_MS });

          await p.keyboard.press("n");
          await p.locator(".current .ticket .mark.vip").waitFor({ timeout: STEP_MS });
          const walkInId = await p.locator(".current .ticket").getAttribute("data-ticket");
          await p.keyboard.press("r");
          await p.waitForFunction(() => document.querySelector(".current .ticket dl")?.textContent?.includes("Recalls1"), null, {
            timeout: STEP_MS,
          });

          // Calling next while the walk-in was never started asks what became of them.
          await p.keyboard.press("n");
          await p.getByRole("dialog", { name: /What became of/ }).waitFor({ timeout: STEP_MS });
          await p.getByRole("button", { name: "Absent" }).click();
          await p.waitForFunction((id) => document.querySelector(".current .ticket")?.getAttribute("data-ticket") === id, regular.id, {
            timeout: STEP_MS,
          });
          const walkIn = await must(api, "GET", `/tickets/${walkInId}`);
          check(walkIn.status === "skipped" && walkIn.source === "vip", `the walk-in after "absent": ${walkIn.status} (${walkIn.source})`);

          await p.keyboard.press("s");
          await p.getByText("being served").waitFor({ timeout: STEP_MS });
          await p.keyboard.press("h");
          await p.locator(".held li").first().waitFor({ timeout: STEP_MS });
          check((await must(api, "GET", `/tickets/${regular.id}`)).status === "held", "not held after H");
          await p.keyboard.press("h");
          await p.locator(".current .ticket").waitFor({ timeout: STEP_MS });
          check((await must(api, "GET", `/tickets/${regular.id}`)).status === "serving", "not serving again after the second H");

          await p.keyboard.press("t");
          await p.getByLabel("To a queue or a colleague").selectOption({ label: `${DEMO.owner.firstName} ${DEMO.owner.lastName}` });
          await p.getByRole("button", { name: "Transfer", exact: true }).last().click();
          await p.getByText("No customer at the desk").waitFor({ timeout: STEP_MS });
          const moved = await must(api, "GET", `/tickets/${regular.id}`);
          check(moved.assignedToId === DEMO.owner.id, `after the transfer the ticket is assigned to ${moved.assignedToId}`);
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages flow 5: a waiting ticket marked VIP from its row moves first and is the one call-next calls; the card shows its masked phone, intake answer and label",
      async run({ browser, api }) {
        await resetDemo(api);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const p = await ctx.newPage();
          await signIn(p, api, DEMO.operator);
          await openDesk(p, "Guichet 1");
          const first = await widgetJoin(api, { visitorName: "First In" });
          const ada = await widgetJoin(api, { visitorName: "Ada", phone: "+33698765432", intake: { reason: "account" } });
          await must(api, "POST", `/tickets/${ada.id}/labels`, { label: "Wheelchair" });
          await p.waitForFunction((n) => document.querySelectorAll(".line tbody .code-cell").length === n, 2, { timeout: STEP_MS });
          check((await waitingCodes(p)).join() === [first.displayCode, ada.displayCode].join(), `line before: ${await waitingCodes(p)}`);

          await p.getByRole("button", { name: `Mark ${ada.displayCode} VIP` }).click({ timeout: STEP_MS });
          await p.getByText(`${ada.displayCode} is now VIP`).waitFor({ timeout: STEP_MS });
          await p.waitForFunction(
            (code) => document.querySelector(".line tbody .code-cell")?.firstChild?.textContent === code,
            ada.displayCode,
            {
              timeout: STEP_MS,
            },
          );
          check((await p.locator(`tr[data-ticket="${ada.id}"] .mark.vip`).count()) === 1, "the marked row shows no VIP mark");
          check((await p.getByRole("button", { name: `Mark ${ada.displayCode} VIP` }).count()) === 0, "a VIP row still offers 'Mark VIP'");
          check((await must(api, "GET", `/tickets/${ada.id}`)).isPriority === true, "the API does not say the ticket is VIP");
          // Marked by mistake: undone from the same row, she goes back behind the first; marked again.
          await p.getByRole("button", { name: `Undo VIP for ${ada.displayCode}` }).click({ timeout: STEP_MS });
          await p.getByText(`${ada.displayCode} is back in the regular line.`).waitFor({ timeout: STEP_MS });
          await p.waitForFunction(
            (code) => document.querySelector(".line tbody .code-cell")?.firstChild?.textContent === code,
            first.displayCode,
            {
              timeout: STEP_MS,
            },
          );
          await p.getByRole("button", { name: `Mark ${ada.displayCode} VIP` }).click({ timeout: STEP_MS });
          await p.waitForFunction(
            (code) => document.querySelector(".line tbody .code-cell")?.firstChild?.textContent === code,
            ada.displayCode,
            {
              timeout: STEP_MS,
            },
          );

          await p.keyboard.press("n");
          await p.waitForFunction((id) => document.querySelector(".current .ticket")?.getAttribute("data-ticket") === id, ada.id, {
            timeout: STEP_MS,
          });
          const card = await p.locator(".current .ticket").innerText();
          check(card.includes("+33 6 •• •• •• 32"), `the card shows no masked phone: ${card}`);
          check(!/98 ?76 ?54|698765432/.test(card), `the card shows the full phone: ${card}`);
          check(card.includes("Reason for the visit") && card.includes("Open an account"), `the card shows no intake answer: ${card}`);
          check(card.includes("wheelchair"), `the card shows no label (labels are kept in lower case): ${card}`);
          check((await waitingCodes(p)).join() === first.displayCode, `line after the call: ${await waitingCodes(p)}`);
          await checkAxe(p, "the console with a full card");
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages console 6: the branch's name on screen; one read of the desk per live signal; a failed read says so and Try again recovers",
      async run({ browser, api }) {
        await resetDemo(api);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const p = await ctx.newPage();
          const reads = { console: 0, lists: 0 };
          p.on("request", (r) => {
            const u = new URL(r.url());
            if (/^\/v1\/desks\/[^/]+\/console$/.test(u.pathname)) reads.console += 1;
            if (/^\/v1\/queues\/[^/]+\/tickets$/.test(u.pathname)) reads.lists += 1;
          });
          await signIn(p, api, DEMO.operator);
          await openDesk(p, "Guichet 1");
          const branch = await p.locator(".bar .branch").innerText({ timeout: STEP_MS });
          check(branch.includes(DEMO.location.name), `the bar does not name the branch: ${branch}`);
          const before = reads.console;
          const one = await widgetJoin(api, { visitorName: "One Read" });
          await p.locator(`tr[data-ticket="${one.id}"]`).waitFor({ timeout: STEP_MS });
          check(reads.lists === 0, `the console read ${reads.lists} ticket lists`);
          check(reads.console - before >= 1 && reads.console - before <= 2, `one signal made ${reads.console - before} reads`);

          // The read fails: the clerk is told, the last good line stays, nothing pretends the line is empty.
          await p.route("**/v1/desks/*/console", (route) =>
            route.fulfill({
              status: 503,
              contentType: "application/json",
              body: JSON.stringify({
                success: false,
                error: {
                  code: "INTERNAL_ERROR",
                  message: "Service unavailable",
                  details: {},
                  timestamp: new Date().toISOString(),
                  requestId: "x",
                },
              }),
            }),
          );
          const two = await widgetJoin(api, { visitorName: "Two Reads" });
          const banner = p.locator('[data-banner="read-failed"]');
          await banner.waitFor({ timeout: STEP_MS });
          const said = await banner.innerText();
          check(said.includes("could not be read") && said.includes("Service unavailable"), `the banner says: ${said}`);
          check((await banner.getAttribute("role")) === "alert", "the failed read is not an alert");
          check((await p.locator(`tr[data-ticket="${one.id}"]`).count()) === 1, "the last good line was emptied");
          await checkAxe(p, "the console with a failed read");
          await p.unroute("**/v1/desks/*/console");
          await banner.getByRole("button", { name: "Try again" }).click();
          await p.locator(`tr[data-ticket="${two.id}"]`).waitFor({ timeout: STEP_MS });
          await banner.waitFor({ state: "detached", timeout: STEP_MS });
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages console 7: an appointment booked through the API, checked in from the day's list, is on the line marked as an appointment with its time and reason",
      async run({ browser, api }) {
        await resetDemo(api);
        const appointment = await bookSoon(api, "Awa Diallo");
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const p = await ctx.newPage();
          await signIn(p, api, DEMO.operator);
          await openDesk(p, "Guichet 1");
          const row = p.locator(`tr[data-appointment="${appointment.id}"]`);
          await row.waitFor({ timeout: STEP_MS });
          await row.getByRole("button", { name: /^Check in Awa Diallo/ }).click();
          await p.getByText(/Awa Diallo checked in: ticket/).waitFor({ timeout: STEP_MS });
          const checked = await must(api, "GET", `/appointments/${appointment.id}`);
          check(checked.status === "checked_in" && checked.ticketId, `the appointment is ${checked.status}`);
          const line = p.locator(`tr[data-ticket="${checked.ticketId}"]`);
          await line.waitFor({ timeout: STEP_MS });
          const mark = await line.locator('[data-mark="appointment"]').innerText();
          check(/^Appointment \d{2}:\d{2}$/.test(mark), `the mark says: ${mark}`);
          const reason = await line.locator(".placement").innerText();
          const ticket = await must(api, "GET", `/tickets/${checked.ticketId}`);
          check(
            ticket.kind === "appointment" && reason === ticket.placement.reason,
            `the reason shown: ${reason}; the API's: ${ticket.placement?.reason}`,
          );
          check((await row.innerText()).includes("checked in"), `the day's list says: ${await row.innerText()}`);
          await checkAxe(p, "the console with an appointment");
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages appointment chain: a visitor books in the widget, checks in at the kiosk with the code, and is on the console's line marked as an appointment with its reason, in EN then FR (axe, screenshots)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        await bookable(api, 240);
        try {
          for (const lang of ["en", "fr"]) {
            const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: lang === "fr" ? "fr-FR" : "en-GB" });
            try {
              const booked = await bookInWidget(await ctx.newPage(), api, lang);
              const k = await ctx.newPage();
              await k.goto(kioskUrl(api, lang), { timeout: STEP_MS });
              await k
                .getByRole("button", { name: lang === "fr" ? "J'ai un rendez-vous" : "I have an appointment" })
                .click({ timeout: STEP_MS });
              await k.getByLabel(lang === "fr" ? "Votre code d'arrivée" : "Your check-in code").fill(booked.code);
              await k.keyboard.press("Enter");
              await k.waitForSelector(".issued [data-kind=appointment]", { timeout: STEP_MS });
              const checked = await must(api, "GET", `/appointments/${booked.id}`);
              check(checked.status === "checked_in" && checked.ticketId, `after the kiosk: ${checked.status}`);
              const ticket = await must(api, "GET", `/tickets/${checked.ticketId}`);
              check(ticket.kind === "appointment", `the ticket's kind: ${ticket.kind}`);

              const p = await ctx.newPage();
              await signIn(p, api, DEMO.operator);
              await p.getByRole("button", { name: /Guichet 1/ }).waitFor({ timeout: STEP_MS });
              if (lang === "fr") await p.getByRole("combobox", { name: "Language" }).selectOption("fr");
              await openDesk(p, "Guichet 1");
              const line = p.locator(`tr[data-ticket="${checked.ticketId}"]`);
              await line.waitFor({ timeout: STEP_MS });
              const mark = await line.locator('[data-mark="appointment"]').innerText();
              check(
                lang === "fr" ? /^Rendez-vous/.test(mark) : /^Appointment \d{2}:\d{2}$/.test(mark),
                `the console's mark in ${lang}: ${mark}`,
              );
              const reason = await line.locator(".placement").innerText();
              check(reason === ticket.placement.reason, `the reason shown: ${reason}; the API's: ${ticket.placement?.reason}`);
              check(
                lang === "fr" ? /^Rendez-vous de /.test(reason) : /^Appointment at /.test(reason),
                `the reason is not in the visitor's language (${lang}): ${reason}`,
              );
              await checkAxe(p, `the console with the widget's appointment (${lang})`);
              if (screenshots) {
                mkdirSync(screenshots, { recursive: true });
                await p.screenshot({ path: path.join(screenshots, `console-appointment-chain-${lang}-1280x800.png`) });
              }
              // The next run starts from an empty line.
              for (const desk of await must(api, "GET", `/locations/${DEMO.location.id}/desks`)) {
                if (desk.status === "open") await must(api, "POST", `/desks/${desk.id}/close`);
              }
              await must(api, "POST", `/queues/${DEMO.queue.id}/clear`);
            } finally {
              await ctx.close();
            }
          }
        } finally {
          await bookable(api, 240);
        }
      },
    },
    {
      name: "pages board: the board of one branch (location=) shows its name and open desks, never a second branch's queue or call (axe)",
      async run({ browser, api }) {
        await resetDemo(api);
        const second = await secondBranch(api);
        await must(api, "POST", `/queues/${second.queue.id}/clear`);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const board = await ctx.newPage();
          const url = `${api}/v1/widget/board?organization=${DEMO.organization.id}&location=${DEMO.location.id}&key=${DEMO.widgetKey.value}`;
          await board.goto(`${url}&language=en&sound=0`, { timeout: STEP_MS });
          await board.getByText(DEMO.queue.name).first().waitFor({ timeout: STEP_MS });
          await board.getByText(DEMO.location.name).first().waitFor({ timeout: STEP_MS });
          check((await board.getByText(SECOND.queue).count()) === 0, "the first branch's board shows the second branch's queue");
          // A call at each branch: only the first branch's reaches its screen.
          await must(
            api,
            "POST",
            `/widget/queue/${second.queue.id}/join`,
            { visitorName: "Elsewhere" },
            { "X-API-Key": DEMO.widgetKey.value },
          );
          await must(api, "POST", `/queues/${second.queue.id}/call-next`, { counter: "Bastille 7" });
          const ours = await widgetJoin(api, { visitorName: "Here" });
          await must(api, "POST", `/queues/${DEMO.queue.id}/call-next`, {});
          await board.locator(`[data-called="${ours.displayCode}"]`).first().waitFor({ timeout: STEP_MS });
          const shown = await board.locator("#widget").evaluate((w) => (w.shadowRoot ?? w).textContent);
          check(!shown.includes(SECOND.queue), `the second branch's queue appeared: ${shown}`);
          check(!shown.includes("Bastille 7"), `the second branch's call appeared on the first branch's board: ${shown}`);
          await checkAxe(board, "the branch's board");
          // The desks layout lists every open desk, also one that has not called yet.
          const desks = await must(api, "GET", `/locations/${DEMO.location.id}/desks`);
          await must(api, "POST", `/desks/${desks.find((d) => d.name === "Guichet 2").id}/open`);
          await board.goto(`${url}&language=fr&sound=0&layout=desks`, { timeout: STEP_MS });
          await board.locator('[data-desk="Guichet 2"]').waitFor({ timeout: STEP_MS });
          await board.getByText(DEMO.location.name).first().waitFor({ timeout: STEP_MS });
          await checkAxe(board, "the branch's board, desks layout");
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages status: the header says business, branch and address; notify is hidden where it cannot work; step back asks first, then is gone (axe)",
      async run({ browser, api }) {
        await resetDemo(api);
        const mine = await widgetJoin(api, { visitorName: "Ada" });
        await widgetJoin(api, { visitorName: "Behind" });
        for (const lang of ["en", "fr"]) {
          const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: lang === "fr" ? "fr-FR" : "en-GB" });
          try {
            const p = await ctx.newPage();
            // A browser that cannot receive notifications (no Push API).
            await p.addInitScript(() => {
              delete window.PushManager;
            });
            await p.goto(`${api}/t/${mine.id}?lang=${lang}#token=${mine.ticketToken}`, { timeout: STEP_MS });
            await p.waitForSelector("#code", { timeout: STEP_MS });
            const header = p.locator("header");
            for (const text of [DEMO.organization.name, DEMO.location.name, DEMO.location.address])
              await header.getByText(text, { exact: false }).first().waitFor({ timeout: STEP_MS });
            check(
              (await p.getByRole("button", { name: /Notify me|Me prévenir/ }).count()) === 0,
              `${lang}: a notify button that cannot work`,
            );
            await checkAxe(p, `the status page (${lang})`);
            if (lang === "fr") continue;
            await p.getByRole("button", { name: "Let the next person go first" }).click();
            const dialog = p.getByRole("dialog", { name: /Let the next person go first\?/ });
            await dialog.waitFor({ timeout: STEP_MS });
            check((await p.locator("[data-position]").textContent()).includes("You are next"), "stepped back before confirming");
            await checkAxe(p, "the step-back confirmation");
            await dialog.getByRole("button", { name: "Cancel" }).click();
            await dialog.waitFor({ state: "detached", timeout: STEP_MS });
            await p.getByRole("button", { name: "Let the next person go first" }).click();
            await p.getByRole("dialog").getByRole("button", { name: "Yes, let them go first" }).click();
            await p.getByText("1 before you").waitFor({ timeout: STEP_MS });
            // The live update may show the new place before the step-back's own answer hides the button.
            await p
              .getByRole("button", { name: "Let the next person go first" })
              .waitFor({ state: "detached", timeout: STEP_MS })
              .catch(() => check(false, "the step-back button stays after use"));
            await p.reload();
            await p.waitForSelector("#code", { timeout: STEP_MS });
            check(
              (await p.getByRole("button", { name: "Let the next person go first" }).count()) === 0,
              "the step-back button is back after a reload",
            );
          } finally {
            await ctx.close();
          }
        }
      },
    },
    {
      name: "pages status language: a ticket taken in French opens in French without ?lang= in an English browser; ?lang=en still wins (axe)",
      async run({ browser, api }) {
        await resetDemo(api);
        const mine = await widgetJoin(api, { visitorName: "Léa", language: "fr" });
        const read = await must(api, "GET", `/widget/tickets/${mine.id}`, null, { "X-Ticket-Token": mine.ticketToken });
        check(read.language === "fr", `the visitor's read: language ${read.language}`);
        const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "en-GB" });
        try {
          const p = await ctx.newPage();
          await p.goto(`${api}/t/${mine.id}#token=${mine.ticketToken}`, { timeout: STEP_MS });
          await p.getByText("Vous êtes le prochain").waitFor({ timeout: STEP_MS });
          check((await p.evaluate(() => document.documentElement.lang)) === "fr", "the page's lang is not fr");
          await p.getByText("Votre ticket", { exact: false }).first().waitFor({ timeout: STEP_MS });
          await checkAxe(p, "the status page in the ticket's language");
          // The visitor's own choice beats the ticket's.
          await p.goto(`${api}/t/${mine.id}?lang=en#token=${mine.ticketToken}`, { timeout: STEP_MS });
          await p.getByText("You are next").waitFor({ timeout: STEP_MS });
          check((await p.evaluate(() => document.documentElement.lang)) === "en", "?lang=en did not win over the ticket's language");
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages board ticket language: with voices=fr,en,ar an Arabic ticket's call is said in Arabic only; a Spanish one (not offered) in the first voice, French",
      async run({ browser, api }) {
        await resetDemo(api);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "fr-FR" });
        try {
          const board = await ctx.newPage();
          await board.addInitScript(() => {
            window.utterances = [];
            SpeechSynthesis.prototype.speak = function (u) {
              window.utterances.push({ text: u.text, lang: u.lang });
              setTimeout(() => u.onend?.(new Event("end")), 300);
            };
            SpeechSynthesis.prototype.getVoices = () =>
              ["fr-FR", "en-GB", "ar-MA"].map((lang) => ({ lang, name: lang, default: false, localService: true, voiceURI: lang }));
          });
          const url = `${api}/v1/widget/board?organization=${DEMO.organization.id}&location=${DEMO.location.id}&key=${DEMO.widgetKey.value}`;
          await board.goto(`${url}&language=fr&kiosk=1&voices=fr,en,ar`, { timeout: STEP_MS });
          await board.getByText(DEMO.queue.name).first().waitFor({ timeout: STEP_MS });
          const arabic = await widgetJoin(api, { visitorName: "Amal", language: "ar" });
          const spanish = await widgetJoin(api, { visitorName: "Lucía", language: "es" });
          const said = async (ticket, counter) => {
            const before = await board.evaluate(() => window.utterances.length);
            const called = await must(api, "POST", `/queues/${DEMO.queue.id}/call-next`, { counter });
            check(called.id === ticket.id, `call-next called ${called.displayCode}, not ${ticket.displayCode}`);
            await board.locator(`[data-called="${ticket.displayCode}"]`).first().waitFor({ timeout: STEP_MS });
            await board.waitForFunction((n) => window.utterances.length > n, before, { timeout: STEP_MS });
            // Time for any other voice to follow (each utterance ends after 300 ms).
            await new Promise((r) => setTimeout(r, 2000));
            return (await board.evaluate(() => window.utterances)).slice(before);
          };
          const spokenCode = (code) => code.replace(/^([A-Za-z]+)-0*(\d+)$/, "$1 $2");
          const inArabic = await said(arabic, "Guichet 2");
          check(
            JSON.stringify(inArabic) === JSON.stringify([{ text: `التذكرة ${spokenCode(arabic.displayCode)}، Guichet 2`, lang: "ar-MA" }]),
            `the Arabic ticket's call: ${JSON.stringify(inArabic)}`,
          );
          const inFrench = await said(spanish, "Guichet 1");
          check(
            JSON.stringify(inFrench) ===
              JSON.stringify([{ text: `Numéro ${spokenCode(spanish.displayCode)}, au guichet 1`, lang: "fr-FR" }]),
            `the Spanish ticket's call (not offered): ${JSON.stringify(inFrench)}`,
          );
        } finally {
          await ctx.close();
        }
      },
    },
    ...["en", "fr", "ar"].map((lang) => ({
      name: `pages widget questions (${lang}): embed.js's join form asks the service's required question; unanswered, the join waits (said in the page's words); answered, the ticket has it (axe)`,
      async run({ browser, api }) {
        await resetDemo(api);
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REQUIRED_REASON] });
        const fr = lang === "fr";
        // Arabic (issue 42): the page's words in Arabic, the business's questions as it wrote them (English).
        const ar = lang === "ar";
        const W = {
          name: fr ? "Votre nom (facultatif)" : ar ? "اسمك (اختياري)" : "Your name (optional)",
          take: fr ? "Prendre un ticket" : ar ? "خذ تذكرة" : "Take a ticket",
          required: fr ? "Merci de répondre à cette question." : ar ? "يرجى الإجابة عن هذا السؤال." : "Please answer this question.",
          details: fr ? "Précisions (facultatif)" : ar ? "Details (اختياري)" : "Details (optional)",
          short: fr
            ? "Merci d'écrire une réponse courte (500 caractères au plus)."
            : ar
              ? "يرجى كتابة إجابة قصيرة (500 حرف على الأكثر)."
              : "Please write a short answer (at most 500 characters).",
        };
        const ctx = await browser.newContext({ viewport: { width: 768, height: 1024 }, locale: fr ? "fr-FR" : ar ? "ar-MA" : "en-GB" });
        try {
          const p = await ctx.newPage();
          const joins = [];
          p.on("request", (r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`) && r.method() === "POST" && joins.push(r));
          const config = {
            type: "join",
            queueId: DEMO.queue.id,
            organizationId: DEMO.organization.id,
            apiKey: DEMO.widgetKey.value,
            language: lang,
            showLogo: false,
            apiBase: api,
          };
          await openWidget(p, api, lang, config, "join");
          const w = p.locator("#widget");
          const question = w.getByRole("group", { name: fr ? "Motif de la visite" : "Reason for the visit" });
          await question.waitFor({ timeout: STEP_MS });
          await w.getByLabel(W.name).fill(fr ? "Léa" : "Ada");
          await checkAxe(p, `the widget's question (${lang})`);
          await w.getByRole("button", { name: W.take }).click();
          await w.getByText(W.required).waitFor({ timeout: STEP_MS });
          check(joins.length === 0, "the join went with the required question unanswered");
          await checkAxe(p, `the widget's refused question (${lang})`);
          await w.getByLabel(fr ? "Problème de carte" : "Card issue").check();
          const joined = p.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await w.getByRole("button", { name: W.take }).click();
          const res = await joined;
          check(res.status() === 201, `the join answered ${res.status()} ${await res.text()}`);
          const ticket = (await res.json()).data;
          await w.locator(`[data-ticket="${ticket.id}"]`).waitFor({ timeout: STEP_MS });
          const stored = await must(api, "GET", `/tickets/${ticket.id}`);
          check(stored.intake?.reason === "card", `the ticket's intake: ${JSON.stringify(stored.intake)}`);
          // The API's refusal of an answer (a bidi override in a text) stands under its question, in the page's words.
          await must(api, "PUT", `/services/${DEMO.service.id}/intake`, {
            fields: [REQUIRED_REASON, { key: "note", label: { fr: "Précisions", en: "Details" }, type: "text", required: "never" }],
          });
          await p.evaluate(() => localStorage.clear());
          await p.reload();
          const note = w.getByLabel(W.details);
          await note.waitFor({ timeout: STEP_MS });
          await w.getByLabel(fr ? "Ouvrir un compte" : "Open an account").check();
          await note.fill("abc\u202edef");
          const refused = p.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await w.getByRole("button", { name: W.take }).click();
          check((await refused).status() === 400, "the join with a bidi override was not refused");
          await w.getByText(W.short).waitFor({ timeout: STEP_MS });
          if (ar)
            check(
              (await p.locator("#widget").evaluate((h) => h.shadowRoot.querySelector(".qw").getAttribute("dir"))) === "rtl",
              "the Arabic widget is not right to left",
            );
          check((await note.getAttribute("aria-invalid")) === "true", "the refused answer's input is not marked invalid");
        } finally {
          await ctx.close();
          // Back to the demo's one optional question: the cases after this one join without answers.
          await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REASON_QUESTION] });
        }
      },
    })),
    {
      name: "pages: the floor view shows the desks and the queues with their waiting line (axe)",
      async run({ browser, api }) {
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        try {
          const p = await ctx.newPage();
          await signIn(p, api, DEMO.owner);
          await p
            .getByRole("button", { name: /Call next|Guichet/ })
            .first()
            .waitFor({ timeout: STEP_MS });
          // A walk-in waiting, so the floor has a line to show.
          await widgetJoin(api, { visitorName: "Floor" });
          await p.goto(`${api}/console/floor`, { timeout: STEP_MS });
          await p.waitForSelector("table", { timeout: STEP_MS });
          check((await p.getByText("not available").count()) === 0, "the floor view says the floor route is missing");
          for (const name of ["Guichet 1", "Guichet 2", DEMO.queue.name]) await p.getByText(name).first().waitFor({ timeout: STEP_MS });
          await checkAxe(p, "the floor view");
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages console sso: Sign in with your organization asks for the e-mail, goes through the service and comes back to the console saying why not (a domain without single sign-on) (axe)",
      async run({ browser, api, screenshots }) {
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const p = await ctx.newPage();
          await p.goto(`${api}/console?lang=en`, { timeout: STEP_MS });
          const button = p.getByRole("button", { name: "Sign in with your organization" });
          await button.waitFor({ timeout: STEP_MS });
          await checkAxe(p, "the console's sign-in with the organization's button");
          // No e-mail yet: the page asks for it and goes nowhere.
          await button.click();
          await p.getByRole("alert").filter({ hasText: "Enter your work email" }).waitFor({ timeout: STEP_MS });
          check(new URL(p.url()).pathname === "/console", `left the console: ${p.url()}`);
          // An e-mail whose domain signs in with no provider: start answers 303 back to the console.
          await p.getByLabel("Email").fill("someone@no-sso-here.example.com");
          const back = p.waitForURL((url) => url.pathname === "/console" && !url.searchParams.has("sso_error"), { timeout: STEP_MS });
          await Promise.all([p.waitForNavigation({ timeout: STEP_MS }), button.click()]);
          await back;
          const said = p.getByRole("alert").filter({ hasText: "does not sign in this way" });
          await said.waitFor({ timeout: STEP_MS });
          check(new URL(p.url()).searchParams.get("lang") === "en", `the page's language was lost: ${p.url()}`);
          if (screenshots) {
            mkdirSync(screenshots, { recursive: true });
            await p.screenshot({ path: path.join(screenshots, "console-sso-not-configured-1280x800.png") });
          }
          await checkAxe(p, "the console saying the organization does not sign in this way");
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages floor: signs in on its own page; a queue's target wait turns a line amber then red on the moved clocks (the page's pinned at 23:56 in Paris, crossing midnight); the alert names the open idle desk (axe)",
      async run({ browser, api }) {
        const desks = await resetDemo(api);
        const guichet1 = desks.find((d) => d.name === "Guichet 1");
        await must(api, "PATCH", `/business/queues/${DEMO.queue.id}`, { targetWaitMinutes: 10 });
        // An open desk calling from the queue with nobody at it.
        await must(api, "POST", `/desks/${guichet1.id}/open`);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB", timezoneId: "Europe/Paris" });
        try {
          const p = await ctx.newPage();
          // The page's clock is Playwright's: the waits are judged on it between reads.
          // Pinned at 23:56 in Paris: the 11 minutes cross midnight on the page's clock on every run, whatever the
          // time of day (the server side of a wait across midnight: test/integration/floor.test.ts).
          await p.clock.install({ time: Date.parse("2026-11-28T22:56:00Z") });
          // The printed floor link alone: its own sign-in form.
          await p.goto(`${api}/console/floor?lang=en`, { timeout: STEP_MS });
          await p.getByRole("heading", { name: "Floor — sign in" }).waitFor({ timeout: STEP_MS });
          await checkAxe(p, "the floor's sign-in");
          await p.getByLabel("Email").fill(DEMO.owner.email);
          await p.getByLabel("Password").fill(DEMO.owner.password);
          await p.getByRole("button", { name: "Sign in" }).click();
          await p.getByText(DEMO.location.address).waitFor({ timeout: STEP_MS });
          await p.getByRole("heading", { level: 1, name: new RegExp(DEMO.location.name) }).waitFor({ timeout: STEP_MS });
          const ticket = await widgetJoin(api, { visitorName: "Floor Wait" });
          const row = p.locator(`tr[data-ticket="${ticket.id}"]`);
          await row.waitFor({ timeout: STEP_MS });
          check((await row.getAttribute("data-level")) === "ok", "a new ticket's row is not ok");
          check((await row.textContent()).includes("Floor Wait"), "the row does not name the visitor");
          check((await p.locator("[data-alert]").count()) === 0, "an alert before the target");
          // 75 % of the target: amber, said in words. The server's clock moves with the page's, so a read
          // of the floor in between (a late live signal) agrees with the page instead of undoing its move.
          await moveClocks(api, p, 8 * 60_000);
          await p.locator(`tr[data-ticket="${ticket.id}"][data-level="amber"]`).waitFor({ timeout: STEP_MS });
          check((await row.textContent()).includes("near the target"), `amber row says: ${await row.textContent()}`);
          check((await p.locator(`[data-queue="${DEMO.queue.id}"]`).getAttribute("data-level")) === "amber", "the queue is not amber");
          check((await p.locator("[data-alert]").count()) === 0, "an alert before the target is reached");
          // A second visitor joins: the live signal makes the page read the floor again, on the server's moved clock,
          // and the first row stays amber (the page's clock alone was undone by such a read: the old failure).
          const second = await widgetJoin(api, { visitorName: "Floor Second" });
          await p.locator(`tr[data-ticket="${second.id}"]`).waitFor({ timeout: STEP_MS });
          check(
            (await row.getAttribute("data-level")) === "amber",
            `after a read, the first row is ${await row.getAttribute("data-level")}`,
          );
          // Past the target with Guichet 1 open and idle: red, and the staff alert.
          await moveClocks(api, p, 3 * 60_000);
          await p.locator(`tr[data-ticket="${ticket.id}"][data-level="red"]`).waitFor({ timeout: STEP_MS });
          check((await row.textContent()).includes("past the target"), `red row says: ${await row.textContent()}`);
          const alert = p.locator("[data-alert]").filter({ hasText: ticket.displayCode });
          await alert.waitFor({ timeout: STEP_MS });
          const said = await alert.textContent();
          check(/has been waiting 1[01] min and Guichet 1 is idle\./.test(said), `alert: ${said}`);
          await checkAxe(p, "the floor with a red line and an alert");
          // The desk calls the visitor: the line empties and the alert goes.
          await must(api, "POST", `/desks/${guichet1.id}/call-next`, {});
          await p.locator("[data-alert]").waitFor({ state: "detached", timeout: STEP_MS });
        } finally {
          await ctx.close();
          await moveClocks(api, null, "reset");
          await must(api, "PATCH", `/business/queues/${DEMO.queue.id}`, { targetWaitMinutes: null });
        }
      },
    },
    {
      name: "pages console alert: a visitor past the queue's target while this desk is open and idle: the console says so, on the moved clocks (server and page); a failed read of the alerts is said, not hidden",
      async run({ browser, api }) {
        await resetDemo(api);
        await must(api, "PATCH", `/business/queues/${DEMO.queue.id}`, { targetWaitMinutes: 10 });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const p = await ctx.newPage();
          // The console reads the alerts every 15 s on its own clock: Playwright's, moved with the server's.
          await p.clock.install({ time: Date.now() });
          await signIn(p, api, DEMO.operator);
          await openDesk(p, "Guichet 1");
          const ticket = await widgetJoin(api, { visitorName: "Alert Wait" });
          await p.waitForSelector(".line tbody .code-cell", { timeout: STEP_MS });
          check((await p.locator('[data-banner="staff-alert"]').count()) === 0, "an alert before the target");
          // 9 min: under the target, no alert after the next read.
          await moveClocks(api, p, 9 * 60_000);
          await p.clock.fastForward(16_000);
          await p.waitForTimeout(1000);
          check((await p.locator('[data-banner="staff-alert"]').count()) === 0, "an alert before the target");
          // Past the target: the 15 s read brings the alert (no live signal needed).
          await moveClocks(api, p, 2 * 60_000);
          const banner = p.locator('[data-banner="staff-alert"]');
          await banner.waitFor({ timeout: STEP_MS });
          const said = await banner.textContent();
          check(new RegExp(`${ticket.displayCode} has been waiting 1[01] min and your desk is idle\\.`).test(said), `alert: ${said}`);
          await checkAxe(p, "the console with a staff alert");
          // The floor cannot be read: the console says the alerts shown may be out of date, and keeps them.
          await p.route("**/v1/locations/*/floor", (route) =>
            route.fulfill({
              status: 503,
              contentType: "application/json",
              body: JSON.stringify({ success: false, error: { code: "SERVICE_UNAVAILABLE", message: "Service unavailable", details: {} } }),
            }),
          );
          await p.clock.fastForward(16_000);
          const failed = p.locator('[data-banner="alerts-failed"]');
          await failed.waitFor({ timeout: STEP_MS });
          check(
            /could not be refreshed.*from the last successful read/.test(await failed.textContent()),
            `said: ${await failed.textContent()}`,
          );
          check((await banner.count()) === 1, "the last alerts were dropped");
          await checkAxe(p, "the console with a failed read of its alerts");
          await p.unroute("**/v1/locations/*/floor");
          await failed.getByRole("button", { name: "Try again" }).click();
          await failed.waitFor({ state: "detached", timeout: STEP_MS });
          // Calling the visitor ends it.
          await p.keyboard.press("n");
          await p.waitForSelector(".current .ticket .code", { timeout: STEP_MS });
          await banner.waitFor({ state: "detached", timeout: STEP_MS });
        } finally {
          await ctx.close();
          await moveClocks(api, null, "reset");
          await must(api, "PATCH", `/business/queues/${DEMO.queue.id}`, { targetWaitMinutes: null });
        }
      },
    },
    {
      name: "pages: the status page asks for the phone code while the number is unproven (requirePhoneCode), EN and FR (axe)",
      async run({ browser, api }) {
        await resetDemo(api);
        const policy = `/organizations/${DEMO.organization.id}/sms-policy`;
        await must(api, "PATCH", policy, { requirePhoneCode: true, allowedCountries: ["FR"] });
        const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "en-GB", isMobile: true, hasTouch: true });
        let ticket;
        try {
          ticket = await must(api, "POST", `/widget/queue/${DEMO.queue.id}/join`, { phone: "+33612340001" });
          check(ticket.phoneVerification.status === "pending", `the join answered ${JSON.stringify(ticket.phoneVerification)}`);
          const page = await phone.newPage();
          await page.goto(`${api}/t/${ticket.id}?lang=en#token=${ticket.ticketToken}`, { timeout: STEP_MS });
          const field = page.getByLabel("Code received by text message");
          await field.waitFor({ timeout: STEP_MS });
          await page.getByRole("form", { name: "Confirm your phone number" }).waitFor({ timeout: STEP_MS });
          await checkAxe(page, "the status page with its code field");
          await field.fill("000000");
          await page.getByRole("button", { name: "Confirm my number" }).click();
          // (000000 is the code once in a million: then the page says the number is confirmed.)
          await page.getByText(/Wrong code: 4 tries left\.|Your number is confirmed/).waitFor({ timeout: STEP_MS });
          await page.goto(`${api}/t/${ticket.id}?lang=fr#token=${ticket.ticketToken}`, { timeout: STEP_MS });
          await page.getByLabel("Code reçu par SMS").waitFor({ timeout: STEP_MS });
          await page.getByRole("button", { name: "M'envoyer un nouveau code" }).waitFor({ timeout: STEP_MS });
          await checkAxe(page, "the status page with its code field, in French");
        } finally {
          await phone.close();
          if (ticket) await apiCall(api, "POST", `/tickets/${ticket.id}/cancel`);
          await must(api, "PATCH", policy, { requirePhoneCode: null, allowedCountries: null });
        }
      },
    },
    {
      name: "pages kiosk: a service with a required question: the kiosk asks it (refused unanswered, in the page's words), then issues the ticket with the answer; in Spanish the refusal is Spanish (axe)",
      async run({ browser, api }) {
        await resetDemo(api);
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REQUIRED_REASON] });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB", hasTouch: true });
        try {
          const k = await ctx.newPage();
          await k.goto(kioskUrl(api, "en"), { timeout: STEP_MS });
          await k.getByRole("button", { name: /Guichet/ }).click({ timeout: STEP_MS });
          await k.getByRole("group", { name: "Reason for the visit" }).waitFor({ timeout: STEP_MS });
          await checkAxe(k, "the kiosk's questions");
          await k.getByRole("button", { name: "Take a ticket" }).click();
          await k.getByText("Please answer this question.").waitFor({ timeout: STEP_MS });
          await k.getByLabel("Card issue").check();
          const joined = k.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await k.getByRole("button", { name: "Take a ticket" }).click();
          const res = await joined;
          check(res.status() === 201, `the join answered ${res.status()} ${await res.text()}`);
          const ticket = (await res.json()).data;
          await k.getByText(ticket.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });
          const stored = await must(api, "GET", `/tickets/${ticket.id}`);
          check(stored.intake?.reason === "card", `the ticket's intake: ${JSON.stringify(stored.intake)}`);
          check(stored.language === "en" || stored.language === undefined, `the ticket's language: ${stored.language}`);
          // In Spanish (issue 42): the business's question as it wrote it (English), the page's own words in Spanish.
          const es = await ctx.newPage();
          await es.goto(kioskUrl(api, "es"), { timeout: STEP_MS });
          await es.getByRole("button", { name: /Guichet/ }).click({ timeout: STEP_MS });
          await es.getByRole("group", { name: "Reason for the visit" }).waitFor({ timeout: STEP_MS });
          await es.getByRole("button", { name: "Sacar un turno" }).click();
          await es.getByText("Responda a esta pregunta.").waitFor({ timeout: STEP_MS });
          check((await es.getByText("Please answer this question.").count()) === 0, "the Spanish kiosk refused the answer in English");
          await checkAxe(es, "the Spanish kiosk's refused question");
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages kiosk check-in questions: an appointment of a service with a required question: the kiosk asks it at check-in, shows the API's refusal of an answer under its field, then prints the appointment's ticket with the answers, EN and FR (axe, screenshots)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        await bookable(api, 240);
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REQUIRED_REASON] });
        const ACCOUNT = {
          key: "account",
          label: { fr: "Numéro de client", en: "Customer number" },
          type: "text",
          required: "at_join",
        };
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB", hasTouch: true });
        try {
          for (const lang of ["en", "fr"]) {
            const w =
              lang === "fr"
                ? { have: "J'ai un rendez-vous", code: "Votre code d'arrivée", go: "Valider mon arrivée", reason: "Motif de la visite" }
                : { have: "I have an appointment", code: "Your check-in code", go: "Check in", reason: "Reason for the visit" };
            await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REQUIRED_REASON] });
            const booked = await bookAhead(api, 0, 60);
            const k = await ctx.newPage();
            await k.goto(kioskUrl(api, lang), { timeout: STEP_MS });
            await k.getByRole("button", { name: w.have }).click({ timeout: STEP_MS });
            await k.getByLabel(w.code).fill(booked.checkInCode);
            await k.keyboard.press("Enter");
            // The API refused the check-in without the answer: the kiosk asks the service's question.
            await k.getByRole("group", { name: w.reason }).waitFor({ timeout: STEP_MS });
            check((await must(api, "GET", `/appointments/${booked.id}`)).status === "booked", "checked in without the answer");
            await checkAxe(k, `the kiosk's check-in questions (${lang})`);
            // Unanswered: the page's own check, in its words.
            await k.getByRole("button", { name: w.go }).click();
            await k
              .getByText(lang === "fr" ? "Merci de répondre à cette question." : "Please answer this question.")
              .waitFor({ timeout: STEP_MS });
            // The service adds a required question meanwhile: the API refuses the answers sent, and the kiosk shows why under the new field.
            await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REQUIRED_REASON, ACCOUNT] });
            await k.getByLabel(lang === "fr" ? "Problème de carte" : "Card issue").check();
            const refused = k.waitForResponse((r) => r.url().endsWith("/check-in"), { timeout: STEP_MS });
            await k.getByRole("button", { name: w.go }).click();
            check((await refused).status() === 400, `the check-in with one answer answered ${(await refused).status()}`);
            const shownRefusal = await k.locator('[data-question="account"] .field-error').textContent({ timeout: STEP_MS });
            check(
              shownRefusal ===
                (lang === "fr"
                  ? "Numéro de client : Merci de répondre à cette question."
                  : "Customer number: Please answer this question."),
              `the API's refusal on the kiosk: ${shownRefusal}`,
            );
            await checkAxe(k, `the kiosk's check-in refusal under its field (${lang})`);
            if (screenshots) {
              mkdirSync(screenshots, { recursive: true });
              await k.screenshot({ path: path.join(screenshots, `kiosk-check-in-questions-${lang}-1280x800.png`) });
            }
            await k.getByLabel(lang === "fr" ? "Problème de carte" : "Card issue").check();
            await k.getByLabel(ACCOUNT.label[lang]).fill("C-4711");
            const done = k.waitForResponse((r) => r.url().endsWith("/check-in"), { timeout: STEP_MS });
            await k.getByRole("button", { name: w.go }).click();
            const res = await done;
            check(res.status() === 201, `the check-in with the answers answered ${res.status()} ${await res.text()}`);
            await k.waitForSelector(".issued [data-kind=appointment]", { timeout: STEP_MS });
            const after = await must(api, "GET", `/appointments/${booked.id}`);
            const ticket = await must(api, "GET", `/tickets/${after.ticketId}`);
            check(
              after.status === "checked_in" &&
                ticket.kind === "appointment" &&
                ticket.intake?.reason === "card" &&
                ticket.intake?.account === "C-4711" &&
                (await k.locator(".issued [data-code]").textContent()) === ticket.displayCode,
              `the ticket: ${JSON.stringify(ticket)}`,
            );
            if (screenshots) await k.screenshot({ path: path.join(screenshots, `kiosk-check-in-answered-${lang}-1280x800.png`) });
            await k.close();
          }
        } finally {
          await ctx.close();
          await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REASON_QUESTION] });
        }
      },
    },
    {
      name: "pages console: Add a walk-in asks the service's required question and takes the customer's phone (the ticket has both)",
      async run({ browser, api }) {
        await resetDemo(api);
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REQUIRED_REASON] });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const p = await ctx.newPage();
          await signIn(p, api, DEMO.operator);
          // The desk's read is held back until the dialog is open: a clerk quick on "W" opens the
          // walk-in before the desk's queues are known (seen once in CI): the form must still go to
          // the desk's queue and ask its service's question.
          let release;
          const held = new Promise((r) => (release = r));
          await p.route("**/v1/desks/*/console", async (route) => {
            await held;
            await route.continue();
          });
          await openDesk(p, "Guichet 1");
          await p.keyboard.press("w");
          const dialog = p.getByRole("dialog");
          await dialog.getByLabel("Customer's name (optional)").waitFor({ timeout: STEP_MS });
          release();
          await dialog.getByLabel("Customer's name (optional)").fill("Walk In");
          await dialog.getByLabel("Customer's mobile (optional)").fill("+33 6 12 34 01 77");
          await dialog.getByRole("button", { name: "Add the ticket" }).click();
          await dialog.getByText("Please answer this question.").waitFor({ timeout: STEP_MS });
          await checkAxe(p, "the console's walk-in with a question");
          await dialog.getByLabel("Open an account").check();
          const joined = p.waitForResponse((r) => r.url().endsWith(`/queues/${DEMO.queue.id}/operator-join`), { timeout: STEP_MS });
          await dialog.getByRole("button", { name: "Add the ticket" }).click();
          const res = await joined;
          check(res.status() === 201, `the walk-in answered ${res.status()} ${await res.text()}`);
          const ticket = (await res.json()).data;
          await p.getByText(`Ticket ${ticket.displayCode} added`).waitFor({ timeout: STEP_MS });
          const stored = await must(api, "GET", `/tickets/${ticket.id}`);
          check(stored.intake?.reason === "account", `the walk-in's intake: ${JSON.stringify(stored.intake)}`);
          check(stored.phoneMasked?.endsWith("77"), `the walk-in's phone: ${stored.phoneMasked}`);
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages console walk-in language (issue 42): the walk-in form offers the organization's languages with the branch's default (Spanish) chosen, not the console's English; a pick (Português) is the ticket's language (axe)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        await must(api, "PATCH", `/locations/${DEMO.location.id}`, { defaultLanguage: "es" });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const p = await ctx.newPage();
          await signIn(p, api, DEMO.operator);
          await openDesk(p, "Guichet 1");
          for (const [pick, expected, phone, texted] of [
            [null, "es", "+33 6 12 34 02 81", /^Está en la fila de /],
            ["pt", "pt", "+33 6 12 34 02 82", /^Está na fila de /],
          ]) {
            await p.keyboard.press("w");
            const dialog = p.getByRole("dialog");
            const select = dialog.getByLabel("Customer's language (their texts and page)");
            await select.waitFor({ timeout: STEP_MS });
            const chosen = await select.inputValue();
            check(chosen === "es", `the walk-in's language starts at "${chosen}", not the branch's Spanish`);
            const names = await select.locator("option").allTextContents();
            check(
              ["Français", "English", "Español", "Português", "العربية"].every((n) => names.includes(n)),
              `offered: ${names.join(", ")}`,
            );
            await dialog.getByLabel("Customer's mobile (optional)").fill(phone);
            if (pick) await select.selectOption(pick);
            else {
              await checkAxe(p, "the console's walk-in with its language");
              if (screenshots) {
                mkdirSync(screenshots, { recursive: true });
                await p.screenshot({ path: path.join(screenshots, "console-walk-in-language-1280x800.png") });
              }
            }
            const joined = p.waitForResponse((r) => r.url().endsWith(`/queues/${DEMO.queue.id}/operator-join`), { timeout: STEP_MS });
            await dialog.getByRole("button", { name: "Add the ticket" }).click();
            const res = await joined;
            check(res.status() === 201, `the walk-in answered ${res.status()} ${await res.text()}`);
            const sent = JSON.parse(res.request().postData() ?? "{}");
            check(sent.language === expected, `the walk-in sent language ${sent.language}, not ${expected}`);
            const ticket = (await res.json()).data;
            await p.getByText(`Ticket ${ticket.displayCode} added`).waitFor({ timeout: STEP_MS });
            // The ticket keeps that language: its SMS speaks it.
            const sms = await outboxSms(ticket.id);
            check(sms.length > 0 && texted.test(sms[0]), `the walk-in's SMS (${expected}): ${JSON.stringify(sms)}`);
          }
        } finally {
          await ctx.close();
          await must(api, "PATCH", `/locations/${DEMO.location.id}`, { defaultLanguage: null });
        }
      },
    },
    {
      name: "pages kiosk: in French, the ticket's SMS (outbox) is French and a refused phone is said in French",
      async run({ browser, api }) {
        await resetDemo(api);
        // No question: the kiosk goes from the service's button straight to the ticket.
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [] });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB", hasTouch: true });
        try {
          const k = await ctx.newPage();
          await k.goto(kioskUrl(api, "fr"), { timeout: STEP_MS });
          // A landline: the API refuses it (not a mobile number); the page says why in French.
          await k.getByLabel(/Téléphone mobile/).fill("+33 1 45 67 89 01");
          await k.getByRole("button", { name: /Guichet/ }).click({ timeout: STEP_MS });
          const alert = k.getByRole("alert");
          await alert.waitFor({ timeout: STEP_MS });
          const said = await alert.textContent();
          check(/^Ce numéro ne peut pas recevoir nos SMS/.test(said ?? ""), `the French kiosk said: ${said}`);
          await checkAxe(k, "the kiosk with a refused phone");
          await k.getByLabel(/Téléphone mobile/).fill("+33 6 12 34 01 88");
          const joined = k.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await k.getByRole("button", { name: /Guichet/ }).click();
          const ticket = (await (await joined).json()).data;
          await k.getByText(ticket.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });
          const sms = await outboxSms(ticket.id);
          check(sms.length > 0, `no SMS in the outbox for ${ticket.id}`);
          check(
            sms.some((body) => body.startsWith("Vous êtes en attente pour Accueil")),
            `the SMS of a French kiosk ticket: ${JSON.stringify(sms)}`,
          );
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages german (issue 42): a language added as its file alone: the kiosk's switch offers Deutsch, the kiosk speaks German, its ticket's SMS is German (axe, screenshot)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [] });
        const dir = screenshots ?? path.join(root, "test", "browser", ".artifacts", "screenshots", "pages");
        mkdirSync(dir, { recursive: true });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB", hasTouch: true });
        try {
          const k = await ctx.newPage();
          await k.goto(kioskUrl(api, "fr"), { timeout: STEP_MS });
          await k.locator("nav.langs").getByRole("button", { name: "Deutsch" }).click({ timeout: STEP_MS });
          await k.getByText("Wählen Sie Ihr Anliegen").waitFor({ timeout: STEP_MS });
          const page = await k.evaluate(() => [document.documentElement.lang, document.documentElement.dir].join(" "));
          check(page === "de ltr", `the German kiosk's document: ${page}`);
          await checkAxe(k, "the kiosk in German");
          await k.getByLabel(/Handynummer/).fill("+33 6 12 34 01 89");
          const joined = k.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await k.getByRole("button", { name: /Guichet/ }).click();
          const ticket = (await (await joined).json()).data;
          await k.getByText(ticket.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });
          await k.getByText("Ihr Ticket").first().waitFor({ timeout: STEP_MS });
          await k.screenshot({ path: path.join(dir, "kiosk-de-ticket.png") });
          const sms = await outboxSms(ticket.id);
          check(
            sms.some((body) => body.startsWith("Sie sind in der Warteschlange für Accueil")),
            `the SMS of a German kiosk ticket: ${JSON.stringify(sms)}`,
          );
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages kiosk: a phone typed while the kiosk was still loading is kept and the ticket has it",
      async run({ browser, api }) {
        await resetDemo(api);
        // No question: the kiosk goes from the service's button straight to the ticket.
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [] });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB", hasTouch: true });
        try {
          const k = await ctx.newPage();
          let release;
          const held = new Promise((r) => (release = r));
          await k.route("**/v1/widget/locations/*/kiosk", async (route) => {
            await held;
            await route.continue();
          });
          await k.goto(kioskUrl(api, "en"), { timeout: STEP_MS, waitUntil: "domcontentloaded" });
          const field = k.getByLabel(/Mobile phone/);
          await field.fill("+33612340199", { timeout: STEP_MS });
          release();
          await k.getByRole("button", { name: /Guichet/ }).waitFor({ timeout: STEP_MS });
          const kept = await field.inputValue();
          check(kept === "+33612340199", `after loading the phone field holds ${JSON.stringify(kept)}`);
          const joined = k.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await k.getByRole("button", { name: /Guichet/ }).click();
          const ticket = (await (await joined).json()).data;
          const stored = await must(api, "GET", `/tickets/${ticket.id}`);
          check(stored.phoneMasked?.endsWith("99"), `the ticket's phone: ${stored.phoneMasked}`);
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages kiosk: silent printing: the branch pairs a USB printer once; the ticket's ESC/POS receipt goes to it (no print dialog); unpaired, the dialog",
      async run({ browser, api }) {
        await resetDemo(api);
        // No question: the kiosk goes from the service's button straight to the ticket.
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [] });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "fr-FR", hasTouch: true });
        try {
          // The staff's setup: the kiosk's printer=setup address, one tap, the browser's chooser (stubbed).
          const setup = await ctx.newPage();
          await setup.addInitScript(stubUsbPrinter, false);
          await setup.goto(kioskUrl(api, "fr", "&printer=setup"), { timeout: STEP_MS });
          await setup.getByRole("button", { name: "Associer l'imprimante de tickets" }).click({ timeout: STEP_MS });
          await setup.getByText("Imprimante associée : Stub TM-T20").waitFor({ timeout: STEP_MS });
          check((await setup.evaluate(() => window.usbRequested.length)) === 1, "requestDevice was not called once");
          await checkAxe(setup, "the kiosk's printer setup");

          // A later visit: the paired printer is found with getDevices() and takes the receipt.
          const k = await ctx.newPage();
          await k.addInitScript(stubUsbPrinter, true);
          await k.goto(kioskUrl(api, "fr"), { timeout: STEP_MS });
          const joined = k.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await k.getByRole("button", { name: /Guichet/ }).click({ timeout: STEP_MS });
          const ticket = (await (await joined).json()).data;
          await k.locator('[data-print="printed"]').waitFor({ timeout: STEP_MS });
          const sent = await k.evaluate(() => window.usbSent);
          check(
            sent.length === 1 && sent[0].endpoint === 2 && sent[0].claimed,
            `the printer received ${JSON.stringify(sent.map((s) => s.endpoint))}`,
          );
          const res = await fetch(`${api}/v1/tickets/${ticket.id}/receipt?format=escpos&language=fr`, {
            headers: { "X-Ticket-Token": ticket.ticketToken },
          });
          const receipt = Buffer.from(await res.arrayBuffer());
          const printed = Buffer.from(sent[0].bytes);
          check(res.ok && printed.equals(receipt), `the printed bytes (${printed.length}) are not the receipt (${receipt.length})`);
          const text = printed.toString("latin1");
          check(
            text.includes(ticket.displayCode) && text.includes("Votre ticket"),
            "the receipt does not hold the code and its French words",
          );
          check((await k.evaluate(() => window.printed)) === 0, "the print dialog opened although a printer is paired");

          // No printer paired: "Imprimer le ticket" opens the browser's dialog.
          const plain = await ctx.newPage();
          await plain.addInitScript(stubUsbPrinter, false);
          await plain.goto(kioskUrl(api, "fr"), { timeout: STEP_MS });
          await plain.getByRole("button", { name: /Guichet/ }).click({ timeout: STEP_MS });
          await plain.getByRole("button", { name: "Imprimer le ticket" }).click({ timeout: STEP_MS });
          await plain.waitForFunction(() => window.printed === 1, null, { timeout: STEP_MS });
          check((await plain.evaluate(() => window.usbSent.length)) === 0, "an unpaired kiosk sent bytes to USB");
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages appointments: a visitor books in the widget by keyboard (service, day, slot held, details), checks in at the kiosk with the code in French; the ticket is kind appointment; refusals in French (unknown code, not open yet), already checked in (axe)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        await bookable(api, 240);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const page = await ctx.newPage();
          const booked = await bookInWidget(page, api, "en", { axe: true });
          const apt = await must(api, "GET", `/appointments/${booked.id}`);
          check(
            apt.status === "booked" && apt.customer.language === "en" && apt.customer.name === "Ada Lovelace",
            `the booking: ${JSON.stringify(apt)}`,
          );
          check(apt.checkInCode === booked.code, `the widget showed ${booked.code}, the API says ${apt.checkInCode}`);
          check(
            booked.manage === `${api}/appointments/${booked.id}#token=${booked.manage.split("#token=")[1]}`,
            `manage link ${booked.manage}`,
          );
          const k = await ctx.newPage();
          await k.goto(kioskUrl(api, "fr"), { timeout: STEP_MS });
          await k.getByRole("button", { name: "J'ai un rendez-vous" }).click({ timeout: STEP_MS });
          await checkAxe(k, "the kiosk's check-in");
          const input = k.getByLabel("Votre code d'arrivée");
          await input.fill("ZZZZZZ");
          await k.keyboard.press("Enter");
          const unknown = await k.getByRole("alert").textContent({ timeout: STEP_MS });
          check(/^Ce code n'est pas connu ici/.test(unknown ?? ""), `the French kiosk said for an unknown code: ${unknown}`);
          await checkAxe(k, "the kiosk's check-in refusal");
          await input.fill(`${booked.code.slice(0, 3).toLowerCase()}-${booked.code.slice(3)}`);
          await k.keyboard.press("Enter");
          await k.waitForSelector(".issued [data-code]", { timeout: STEP_MS });
          const shown = await k.locator(".issued [data-code]").textContent();
          const line = await k.locator("[data-kind=appointment]").textContent();
          check(/^Rendez-vous de \d\d h \d\d$/.test(line ?? ""), `the receipt's appointment line: ${line}`);
          check((await k.locator(".issued .qr svg").count()) === 1, "the check-in receipt has no QR code");
          await checkAxe(k, "the kiosk's appointment ticket");
          const after = await must(api, "GET", `/appointments/${booked.id}`);
          check(after.status === "checked_in" && after.ticketId, `after the kiosk: ${JSON.stringify(after)}`);
          const ticket = await must(api, "GET", `/tickets/${after.ticketId}`);
          check(
            ticket.kind === "appointment" && ticket.appointmentAt === apt.start && ticket.displayCode === shown,
            `the ticket: ${JSON.stringify(ticket)}`,
          );
          // The QR code leads to the visitor's status page of that ticket.
          const qrUrl = await k.evaluate(() => document.querySelector(".issued .qr")?.getAttribute("aria-label"));
          check(qrUrl, "the QR code has no label");
          // The manage link of the confirmation: the appointment, checked in, and a link to its ticket's status page.
          const manage = await ctx.newPage();
          await manage.goto(booked.manage, { timeout: STEP_MS });
          await manage.getByText("You are checked in.").waitFor({ timeout: STEP_MS });
          await checkAxe(manage, "the appointment page, checked in");
          await manage.getByRole("link", { name: "Follow your turn" }).click();
          await manage.waitForURL(/\/t\/tkt_/, { timeout: STEP_MS });
          check(manage.url().includes(after.ticketId), `the appointment page led to ${manage.url()}`);
          // Checked in from the manage page itself (the token): its link carries the ticket's token, the status page shows it.
          const own = await bookAhead(api, 0, 60);
          await manage.goto(`${api}/appointments/${own.id}?lang=en#token=${own.manageToken}`, { timeout: STEP_MS });
          const code = await manage.locator("[data-code]").textContent({ timeout: STEP_MS });
          check(code === own.checkInCode, `the appointment page's code: ${code}`);
          await checkAxe(manage, "the appointment page, booked");
          await manage.getByRole("button", { name: "I am here: check in" }).click();
          await manage.getByRole("link", { name: "Follow your turn" }).click({ timeout: STEP_MS });
          await manage.waitForURL(/\/t\/tkt_.*#token=/, { timeout: STEP_MS });
          const ownTicket = await must(api, "GET", `/appointments/${own.id}`);
          const statusCode = await manage.locator(".big-code").textContent({ timeout: STEP_MS });
          const ownRow = await must(api, "GET", `/tickets/${ownTicket.ticketId}`);
          check(
            ownRow.kind === "appointment" && statusCode === ownRow.displayCode,
            `the status page after the manage page's check-in: ${statusCode}`,
          );
          // The same code again: the same ticket, said to be already checked in.
          // The kiosk went back to its start after 20 s without a touch (or is told so now): start over.
          await k.goto(kioskUrl(api, "fr"), { timeout: STEP_MS });
          await k.getByRole("button", { name: "J'ai un rendez-vous" }).click();
          await k.getByLabel("Votre code d'arrivée").fill(booked.code);
          await k.keyboard.press("Enter");
          const again = await k.getByRole("status").filter({ hasText: "déjà enregistrée" }).textContent({ timeout: STEP_MS });
          check(
            again && (await k.locator(".issued [data-code]").textContent()) === shown,
            "a second check-in did not show the same ticket",
          );
          // Check-in not open yet: the service opens it 30 min before; an appointment 2 h ahead is refused with its time.
          await bookable(api, 30);
          const later = await bookAhead(api, 90, 200);
          // The kiosk went back to its start after 20 s without a touch (or is told so now): start over.
          await k.goto(kioskUrl(api, "fr"), { timeout: STEP_MS });
          await k.getByRole("button", { name: "J'ai un rendez-vous" }).click();
          await k.getByLabel("Votre code d'arrivée").fill(later.checkInCode);
          await k.keyboard.press("Enter");
          const early = await k.getByRole("alert").textContent({ timeout: STEP_MS });
          // When check-in opens, from the API's answer (any time of day: it may be the day before the start, near midnight).
          const opensAt = (await must(api, "GET", `/appointments/${later.id}`)).place.checkInOpensAt;
          const opensHhMm = new Intl.DateTimeFormat("fr-FR", { timeZone: "Europe/Paris", hour: "2-digit", minute: "2-digit" })
            .format(new Date(opensAt))
            .replace(":", " h ");
          check(
            (early ?? "").startsWith(`L'arrivée pour ce rendez-vous ouvre à ${opensHhMm}.`),
            `the French kiosk said for an early check-in: ${early} (opens ${opensAt})`,
          );
          if (screenshots) {
            mkdirSync(screenshots, { recursive: true });
            await k.screenshot({ path: path.join(screenshots, "kiosk-check-in-early-fr-1280x800.png") });
          }
          // The appointment page says when check-in opens, then cancels after a confirmation (in French).
          await manage.goto(`${api}/appointments/${later.id}?lang=fr#token=${later.manageToken}`, { timeout: STEP_MS });
          const opens = await manage.locator("[data-opens]").textContent({ timeout: STEP_MS });
          // The day is named only when check-in opens the day before the start (a start just after midnight).
          check(
            /^L'enregistrement de l'arrivée ouvre à (\p{L}+ \d{1,2} \p{L}+( à)? )?\d\d h \d\d\.$/u.test(opens ?? "") &&
              (opens ?? "").endsWith(`${opensHhMm}.`),
            `the appointment page said: ${opens} (opens ${opensAt})`,
          );
          check(
            (await manage.getByRole("button", { name: /enregistrer mon arrivée/ }).count()) === 0,
            "a check-in button before check-in opens",
          );
          if (screenshots) await manage.screenshot({ path: path.join(screenshots, "appointment-page-fr-1280x800.png") });
          await manage.getByRole("button", { name: "Annuler le rendez-vous" }).click();
          await checkAxe(manage, "the appointment page's cancel confirmation");
          await manage.getByRole("dialog").getByRole("button", { name: "Oui, l'annuler" }).click();
          await manage.getByText("Ce rendez-vous est annulé.").waitFor({ timeout: STEP_MS });
          check(
            (await must(api, "GET", `/appointments/${later.id}`)).status === "cancelled",
            "the appointment page's cancel did not cancel",
          );
        } finally {
          await ctx.close();
          await bookable(api, 240);
        }
      },
    },
    {
      name: "pages appointment reschedule: the appointment page moves a booking to another free slot with its manage token alone, in English, French, then Arabic right to left (issue 42) (axe)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        await bookable(api, 30);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const page = await ctx.newPage();
          for (const [lang, words] of [
            ["en", { change: "Change the time", moved: /^Your appointment is moved to /, current: /your current time/ }],
            ["fr", { change: "Changer l'horaire", moved: /^Votre rendez-vous est déplacé au /, current: /votre horaire actuel/ }],
            ["ar", { change: "تغيير الوقت", moved: /^تم نقل موعدك إلى /, current: /وقتك الحالي/ }],
          ]) {
            const apt = await bookAhead(api, 120, 24 * 60);
            await page.goto(`${api}/appointments/${apt.id}?lang=${lang}#token=${apt.manageToken}`, { timeout: STEP_MS });
            await page.getByRole("button", { name: words.change }).click({ timeout: STEP_MS });
            const dir = await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir].join(" "));
            check(dir === (lang === "ar" ? "ar rtl" : `${lang} ltr`), `the ${lang} page is "${dir}"`);
            await page.locator("[data-slot]").first().waitFor({ timeout: STEP_MS });
            const current = page.getByRole("radio", { name: words.current });
            check((await current.count()) === 1 && (await current.isDisabled()), "the current slot is not shown, disabled");
            let free = page.locator("[data-slot]:not([disabled])");
            // The day is chosen from days named in the page's language, not a date field in the browser's locale (mm/dd/yyyy).
            const dayField = page.locator("select[data-day]");
            const dayName = (await dayField.locator("option:checked").textContent()) ?? "";
            const weekdays =
              lang === "fr"
                ? /^(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche) \d{1,2} \p{L}+$/u
                : lang === "ar"
                  ? /^\p{Script=Arabic}+،? \d{1,2} \p{Script=Arabic}+$/u
                  : /^[A-Z][a-z]+day,? /;
            check(weekdays.test(dayName), `the day field says "${dayName}" on the ${lang} page`);
            check((await page.locator("input[type=date]").count()) === 0, "a date field in the browser's format");
            if ((await free.count()) === 0) {
              // The booking was the day's last slot: the next day.
              const day = await dayField.inputValue();
              const next = new Date(Date.parse(`${day}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
              await dayField.selectOption(next);
              await page.locator("[data-slot]").first().waitFor({ timeout: STEP_MS });
              free = page.locator("[data-slot]:not([disabled])");
            }
            const target = await free.first().getAttribute("data-slot");
            await free.first().click();
            await checkAxe(page, `the appointment page's reschedule (${lang})`);
            if (screenshots) {
              mkdirSync(screenshots, { recursive: true });
              await page.screenshot({ path: path.join(screenshots, `appointment-reschedule-${lang}-1280x800.png`) });
            }
            await page.locator("[data-move]").click();
            const said = await page.locator("[data-moved]").textContent({ timeout: STEP_MS });
            check(words.moved.test(said ?? ""), `the page said after the move: ${said}`);
            const after = await must(api, "GET", `/appointments/${apt.id}`);
            check(after.start === target && after.status === "booked", `after the move: ${JSON.stringify(after)} (chose ${target})`);
          }
        } finally {
          await ctx.close();
          await bookable(api, 240);
        }
      },
    },
    {
      name: "pages arabic: the kiosk, the status page and the board in Arabic are right to left with codes left to right; the board says the call in Arabic (axe, screenshots)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        const dir = screenshots ?? path.join(root, "test", "browser", ".artifacts", "screenshots", "pages");
        mkdirSync(dir, { recursive: true });
        const rtl = (page) => page.evaluate(() => [document.documentElement.lang, document.documentElement.dir].join(" "));
        const ltrCode = (page, selector) =>
          page
            .locator(selector)
            .first()
            .evaluate((e) => getComputedStyle(e).direction);
        const kiosk = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "ar-MA" });
        const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "ar-MA", isMobile: true, hasTouch: true });
        const screen = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "ar-MA" });
        try {
          const board = await screen.newPage();
          await board.addInitScript(() => {
            window.utterances = [];
            SpeechSynthesis.prototype.speak = function (u) {
              window.utterances.push({ text: u.text, lang: u.lang });
              setTimeout(() => u.onend?.(new Event("end")), 300);
            };
          });
          await board.goto(`${api}/v1/widget/board?organization=${DEMO.organization.id}&key=${DEMO.widgetKey.value}&language=ar&kiosk=1`, {
            timeout: STEP_MS,
          });
          await board.getByText(DEMO.queue.name).first().waitFor({ timeout: STEP_MS });
          check((await rtl(board)) === "ar rtl", `the board's document: ${await rtl(board)}`);
          check(
            (await board.locator("#widget").evaluate((w) => w.shadowRoot.querySelector(".qw").getAttribute("dir"))) === "rtl",
            "the board's widget is not right to left",
          );
          // Right to left means names start on the right: the queue's name sits against its card's right edge.
          const nameGap = await board.locator("#widget").evaluate((w) => {
            const h2 = w.shadowRoot.querySelector(".q h2");
            const range = document.createRange();
            range.selectNodeContents(h2);
            return h2.closest(".q").getBoundingClientRect().right - range.getBoundingClientRect().right;
          });
          check(nameGap < 60, `the board's queue name stands ${Math.round(nameGap)}px from its card's right edge`);

          const k = await kiosk.newPage();
          await k.goto(`${api}/kiosk?location=${DEMO.location.id}&key=${DEMO.widgetKey.value}&lang=ar`, { timeout: STEP_MS });
          await k.getByText("اختر الخدمة").waitFor({ timeout: STEP_MS });
          check((await rtl(k)) === "ar rtl", `the kiosk's document: ${await rtl(k)}`);
          // A phone number reads left to right (+33, never 33+), aligned right like the page.
          const tel = await k
            .locator('input[type="tel"]')
            .evaluate((e) => [getComputedStyle(e).direction, getComputedStyle(e).unicodeBidi, getComputedStyle(e).textAlign].join(" "));
          check(tel === "ltr isolate right", `the kiosk's phone field: ${tel}`);
          // What is drawn, not only the style: the field's pixels with "+33 6 12 34 56 78" equal those of the same
          // field forced left to right, and differ from it forced right to left (which would draw "78 56 34 12 6 33+").
          const field = k.locator('input[type="tel"]');
          const prefix = await field.inputValue();
          await field.fill("+33 6 12 34 56 78");
          await field.evaluate((e) => {
            e.blur();
            e.style.caretColor = "transparent";
          });
          const drawn = async (direction) => {
            await field.evaluate((e, d) => (e.style.direction = d), direction);
            return (await field.screenshot()).toString("base64");
          };
          const [asIs, asLtr, asRtl] = [await drawn(""), await drawn("ltr"), await drawn("rtl")];
          await field.evaluate((e) => (e.style.direction = ""));
          await field.fill(prefix);
          check(asIs === asLtr && asIs !== asRtl, "the kiosk's phone field does not draw +33 6 12 34 56 78 left to right");
          // The example number in the hint: its characters' boxes run left to right in reading order.
          const example = await k.locator("#phone-hint").evaluate((hint) => {
            const text = hint.firstChild;
            const start = text.data.indexOf("+");
            const xs = [];
            for (let i = start; i < text.data.length; i++) {
              if (!/[0-9+]/.test(text.data[i])) continue;
              const r = document.createRange();
              r.setStart(text, i);
              r.setEnd(text, i + 1);
              const box = r.getBoundingClientRect();
              xs.push([Math.round(box.top), box.left]);
            }
            return xs;
          });
          // In reading order: left to right on a line; when the number wraps, on to the next line.
          check(
            example.length >= 10 &&
              example.every(
                ([top, x], i) =>
                  i === 0 || top > example[i - 1][0] + 2 || (Math.abs(top - example[i - 1][0]) <= 2 && x > example[i - 1][1]),
              ),
            `the hint's example number is not drawn left to right: ${JSON.stringify(example)}`,
          );
          await checkAxe(k, "the kiosk in Arabic");
          await k.screenshot({ path: path.join(dir, "kiosk-ar-1280x800.png") });
          const joined = k.waitForResponse((r) => r.url().endsWith(`/widget/queue/${DEMO.queue.id}/join`), { timeout: STEP_MS });
          await k.getByRole("button", { name: /Guichet/ }).click();
          await k.getByRole("button", { name: "خذ تذكرة" }).click({ timeout: STEP_MS });
          const ticket = (await (await joined).json()).data;
          await k.getByText(ticket.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });
          await k.getByText("تذكرتك").first().waitFor({ timeout: STEP_MS });
          check((await ltrCode(k, "[data-code]")) === "ltr", "the kiosk's code is not left to right");
          await checkAxe(k, "the kiosk's ticket in Arabic");
          await k.screenshot({ path: path.join(dir, "kiosk-ticket-ar-1280x800.png") });
          const statusUrl = await k.locator(".qr").getAttribute("aria-label");
          check(statusUrl === "امسح الرمز لمتابعة دورك على هاتفك", `the QR's label: ${statusUrl}`);

          // The QR leads to the status page in the kiosk's language.
          const visitor = await phone.newPage();
          await visitor.goto(`${api}/t/${ticket.id}?lang=ar#token=${ticket.ticketToken}`, { timeout: STEP_MS });
          await visitor.getByText(ticket.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });
          await visitor.getByText(/أنت التالي|قبلك/).waitFor({ timeout: STEP_MS });
          check((await rtl(visitor)) === "ar rtl", `the status page's document: ${await rtl(visitor)}`);
          check((await ltrCode(visitor, "#code")) === "ltr", "the status page's code is not left to right");
          // The branch's address is the business's words: "1 place de l'Opéra", never "place de l'Opéra … 1".
          check((await ltrCode(visitor, ".address")) === "ltr", "the status page's address is not isolated left to right");
          await checkAxe(visitor, "the status page in Arabic");
          await visitor.screenshot({ path: path.join(dir, "status-ar-390x844.png") });

          await must(api, "POST", `/queues/${DEMO.queue.id}/call-next`, { counter: "Guichet 1" });
          await visitor.getByText("حان دورك").waitFor({ timeout: STEP_MS });
          await visitor.screenshot({ path: path.join(dir, "status-called-ar-390x844.png") });
          const number = String(Number(ticket.displayCode.split("-")[1]));
          await board.waitForFunction((n) => window.utterances.some((u) => u.text.includes(` ${n}`)), number, { timeout: STEP_MS });
          const said = await board.evaluate(() => window.utterances);
          check(
            said.some((u) => u.text.startsWith("التذكرة") && u.text.includes("Guichet 1") && u.lang === "ar-MA"),
            `the board said ${JSON.stringify(said)}`,
          );
          await board.waitForTimeout(1500);
          await checkAxe(board, "the display board in Arabic");
          await board.screenshot({ path: path.join(dir, "board-ar-1280x800.png") });
        } finally {
          await Promise.all([kiosk.close(), phone.close(), screen.close()]);
        }
      },
    },
    {
      name: "pages: every path to a page carries its CSP, whether the Worker or the assets serve it (/console, /pages/console, /pages/console.html)",
      async run({ api }) {
        const expected = JSON.parse(readFileSync(new URL("../../src/http/page-headers.json", import.meta.url), "utf8"));
        for (const p of ["/console", "/kiosk", "/pages/console", "/pages/kiosk.html", "/pages/status"]) {
          const res = await fetch(`${api}${p}`, { redirect: "manual" });
          for (const [name, value] of Object.entries(expected))
            if (res.headers.get(name) !== value) throw new Error(`${p} (${res.status}): ${name} is ${res.headers.get(name)}`);
        }
      },
    },
    {
      name: "pages #45 visit route: a two-service visit: the console shows leg 1 of 2; once it is completed, the visitor's page opened with leg 1's link moves to leg 2 (same code, step 2 of 2), also when opened again (axe, screenshots)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        const second = await must(api, "POST", "/services", {
          name: "Caisse",
          serviceTypeId: DEMO.service.serviceTypeId,
          locationIds: [DEMO.location.id],
        });
        const clerk = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "en-GB", isMobile: true, hasTouch: true });
        const later = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "fr-FR" });
        try {
          const cashier = await must(api, "POST", "/business/queues", { serviceId: second.id, name: "Caisse" });
          const leg1 = await widgetJoin(api, { visitorName: "Ada", route: [DEMO.service.id, second.id] });
          const visitor = await phone.newPage();
          await visitor.goto(`${api}/t/${leg1.id}?lang=en#token=${leg1.ticketToken}`, { timeout: STEP_MS });
          await visitor.getByText("Step 1 of 2").waitFor({ timeout: STEP_MS });
          await visitor.getByText(leg1.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });

          const c = await clerk.newPage();
          await signIn(c, api, DEMO.operator);
          await openDesk(c, "Guichet 1");
          await c.keyboard.press("n");
          await c.locator(".current .leg").filter({ hasText: "leg 1 of 2" }).waitFor({ timeout: STEP_MS });
          await c.keyboard.press("s");
          await c.getByText("being served").waitFor({ timeout: STEP_MS });
          await c.keyboard.press("c");
          await c.getByRole("button", { name: "Complete the ticket" }).click({ timeout: STEP_MS });
          await c.getByText("No customer at the desk").waitFor({ timeout: STEP_MS });
          const done = await must(api, "GET", `/tickets/${leg1.id}`);
          check(done.status === "served" && /^tkt_/.test(done.routedToId ?? ""), `leg 1 after complete: ${JSON.stringify(done)}`);

          // The page follows the visitor to the cashier's line: leg 2's id in the address, the same code.
          await visitor.waitForURL((u) => u.pathname === `/t/${done.routedToId}`, { timeout: STEP_MS });
          await visitor.getByText("Step 2 of 2").waitFor({ timeout: STEP_MS });
          await visitor.getByText(leg1.displayCode, { exact: true }).waitFor({ timeout: STEP_MS });
          await visitor.getByText("You are next").waitFor({ timeout: STEP_MS });
          check((await visitor.getByText("How was your visit?").count()) === 0, "a verdict asked in the middle of the visit");
          await checkAxe(visitor, "the status page of a visit's second leg");
          if (screenshots) {
            mkdirSync(screenshots, { recursive: true });
            await visitor.screenshot({ path: path.join(screenshots, "status-visit-leg-2-en-390x844.png") });
          }
          const leg2 = await must(api, "GET", `/tickets/${done.routedToId}`);
          check(leg2.queueId === cashier.id && leg2.status === "waiting", `leg 2: ${JSON.stringify(leg2)}`);

          // Leg 1's link opened again later, on another phone, in French: it lands on leg 2.
          const again = await later.newPage();
          await again.goto(`${api}/t/${leg1.id}?lang=fr#token=${leg1.ticketToken}`, { timeout: STEP_MS });
          await again.waitForURL((u) => u.pathname === `/t/${done.routedToId}`, { timeout: STEP_MS });
          await again.getByText("Étape 2 sur 2").waitFor({ timeout: STEP_MS });
        } finally {
          await Promise.all([clerk.close(), phone.close(), later.close()]);
          // The demo keeps one service: the kiosk and board cases expect it.
          await apiCall(api, "DELETE", `/services/${second.id}`);
        }
      },
    },
    {
      name: "pages #45 defer: I'm running late on the status page: 10/15 within the queue's 20 minutes, a refusal in French, Back at HH:MM, gone at the limit; hidden when maxDefers is 0; the console shows the return time (axe, screenshots)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        const bounds = (body) => must(api, "PATCH", `/business/queues/${DEMO.queue.id}`, body);
        await bounds({ maxDeferMinutes: 20, maxDefers: 1 });
        // The ticket's place (and its bounds) is read through a 5-second cache of the queue.
        await new Promise((r) => setTimeout(r, 5_500));
        const mine = await widgetJoin(api, { visitorName: "Léa" });
        const other = await widgetJoin(api, { visitorName: "Ada" });
        const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "fr-FR", isMobile: true, hasTouch: true });
        const clerk = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const p = await phone.newPage();
          await p.goto(`${api}/t/${mine.id}?lang=fr#token=${mine.ticketToken}`, { timeout: STEP_MS });
          await p.getByRole("button", { name: "Je suis en retard" }).click({ timeout: STEP_MS });
          const dialog = p.getByRole("dialog", { name: "Combien de retard aurez-vous ?" });
          await dialog.waitFor({ timeout: STEP_MS });
          const choices = await dialog.locator("[data-late-minutes]").evaluateAll((b) => b.map((x) => x.getAttribute("data-late-minutes")));
          check(JSON.stringify(choices) === JSON.stringify(["10", "15"]), `the choices within 20 minutes: ${choices}`);
          await checkAxe(p, "the running-late dialog");
          if (screenshots) {
            mkdirSync(screenshots, { recursive: true });
            await p.screenshot({ path: path.join(screenshots, "status-running-late-fr-390x844.png") });
          }
          // The business shortened its bound meanwhile: the refusal is said in the page's language.
          await bounds({ maxDeferMinutes: 5 });
          await dialog.getByRole("button", { name: "15 min" }).click();
          await p.getByText("C'est plus tard que ce que ce service permet.").waitFor({ timeout: STEP_MS });
          check((await must(api, "GET", `/tickets/${mine.id}`)).deferCount === 0, "a refused deferral was counted");

          await bounds({ maxDeferMinutes: 20 });
          await p.getByRole("button", { name: "Je suis en retard" }).click();
          const asked = Date.now();
          await p.getByRole("dialog").getByRole("button", { name: "15 min" }).click();
          const back = p.locator("[data-back-at]");
          await back.waitFor({ timeout: STEP_MS });
          const until = Date.parse(await back.getAttribute("data-back-at"));
          check(
            Math.abs(until - (asked + 15 * 60_000)) < 60_000,
            `back at ${new Date(until).toISOString()}, asked at ${new Date(asked).toISOString()}`,
          );
          const shown = /^De retour à (\d\d) h (\d\d)/.exec(await back.textContent());
          check(shown, `the return time: ${await back.textContent()}`);
          check((await p.getByRole("button", { name: "Je suis en retard" }).count()) === 0, "running late is still offered at the limit");
          const stored = await must(api, "GET", `/tickets/${mine.id}`);
          check(stored.deferCount === 1 && stored.deferredUntil === new Date(until).toISOString(), `the ticket: ${JSON.stringify(stored)}`);
          await checkAxe(p, "the status page of a deferred ticket");
          if (screenshots) await p.screenshot({ path: path.join(screenshots, "status-back-at-fr-390x844.png") });

          // The console's line shows the deferred ticket's return time.
          const c = await clerk.newPage();
          await signIn(c, api, DEMO.operator);
          await openDesk(c, "Guichet 1");
          // On the branch's clock, as the visitor's page says it.
          await c.locator(".line").getByText(`Back at ${shown[1]}:${shown[2]}`).waitFor({ timeout: STEP_MS });
          if (screenshots) await c.screenshot({ path: path.join(screenshots, "console-deferred-en-1280x800.png") });

          // No later turns in this queue: the button is not offered.
          await bounds({ maxDefers: 0 });
          await new Promise((r) => setTimeout(r, 5_500));
          const q = await phone.newPage();
          await q.goto(`${api}/t/${other.id}?lang=en#token=${other.ticketToken}`, { timeout: STEP_MS });
          await q.getByRole("button", { name: "Leave the queue" }).waitFor({ timeout: STEP_MS });
          check((await q.getByRole("button", { name: "I'm running late" }).count()) === 0, "running late offered with maxDefers 0");
        } finally {
          await Promise.all([phone.close(), clerk.close()]);
          await bounds({ maxDeferMinutes: 60, maxDefers: 2 });
        }
      },
    },
    {
      name: "pages #45b console conversation: the customer's text shows on the current ticket's card; the clerk's reply goes by SMS and joins the conversation (axe, screenshot)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        const phone = `+3361${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
        const ticket = await widgetJoin(api, { visitorName: "Ada", phone });
        // The customer answers by SMS (the local Twilio stand-in takes unsigned texts); the ticket is
        // matched once the projection has it, so the text is sent again until it is on the conversation.
        const text = "Je serai là dans 5 minutes, gardez ma place svp";
        let listed = [];
        for (const deadline = Date.now() + STEP_MS; listed.length === 0 && Date.now() < deadline;) {
          const form = new URLSearchParams({ From: phone, Body: text, MessageSid: `SM${Math.random().toString(16).slice(2)}` });
          await fetch(`${api}/v1/inbound/sms/twilio`, { method: "POST", body: form, signal: AbortSignal.timeout(STEP_MS) });
          listed = await must(api, "GET", `/tickets/${ticket.id}/messages`);
          if (listed.length === 0) await new Promise((r) => setTimeout(r, 500));
        }
        check(listed[0]?.body === text, `the customer's text is not on the ticket: ${JSON.stringify(listed)}`);
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const c = await ctx.newPage();
          await signIn(c, api, DEMO.operator);
          await openDesk(c, "Guichet 1");
          await c.keyboard.press("n");
          const card = c.locator(`[data-conversation="${ticket.id}"]`);
          await card.getByText(text).waitFor({ timeout: STEP_MS });
          check(
            (await card.locator('[data-message="in"]').first().textContent()).includes("Customer · SMS"),
            "the text is not the customer's",
          );

          const reply = "Bien reçu, votre place est gardée.";
          await card.getByLabel("Reply to the customer").pressSequentially(reply);
          await card.getByRole("button", { name: "Send" }).click();
          await card.getByText("Sent by SMS.").waitFor({ timeout: STEP_MS });
          await card.locator('[data-message="out"].staff').getByText(reply).waitFor({ timeout: STEP_MS });
          check((await card.getByLabel("Reply to the customer").inputValue()) === "", "the reply box was not emptied");
          const after = await must(api, "GET", `/tickets/${ticket.id}/messages`);
          const sent = after.find((m) => m.body === reply);
          check(sent && sent.direction === "out" && sent.channel === "sms" && sent.authorId, `the reply: ${JSON.stringify(after)}`);
          // Typing in the box is not a shortcut: "n" did not call the next customer.
          check((await currentCode(c)) === ticket.displayCode, "a letter typed in the reply box acted as a shortcut");
          await checkAxe(c, "the console's conversation card");
          if (screenshots) {
            mkdirSync(screenshots, { recursive: true });
            await c.screenshot({ path: path.join(screenshots, "console-conversation-en-1280x800.png"), fullPage: true });
          }
        } finally {
          await ctx.close();
        }
      },
    },
    {
      name: "pages #45 console at_serve: start serving is refused for an unanswered at_serve question: the console asks it, saves it on the ticket and starts serving (axe)",
      async run({ browser, api }) {
        await resetDemo(api);
        const FILE = { key: "file_number", label: { fr: "Numéro de dossier", en: "File number" }, type: "text", required: "at_serve" };
        await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REASON_QUESTION, FILE] });
        const ticket = await widgetJoin(api, { visitorName: "Ada" });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-GB" });
        try {
          const c = await ctx.newPage();
          await signIn(c, api, DEMO.operator);
          await openDesk(c, "Guichet 1");
          await c.keyboard.press("n");
          await c.waitForFunction(
            (code) => document.querySelector(".current .ticket .code")?.textContent?.startsWith(code),
            ticket.displayCode,
            {
              timeout: STEP_MS,
            },
          );
          await c.keyboard.press("s");
          const dialog = c.getByRole("dialog", { name: `${ticket.displayCode}: questions to answer first` });
          await dialog.waitFor({ timeout: STEP_MS });
          check((await dialog.locator("[data-question]").count()) === 1, "the dialog asks more than the missing question");
          await dialog.getByRole("button", { name: "Save and continue" }).click();
          await dialog.getByText("Please answer this question.").waitFor({ timeout: STEP_MS });
          await checkAxe(c, "the console's at_serve questions");
          await dialog.getByLabel("File number").fill("D-2026-117");
          await dialog.getByRole("button", { name: "Save and continue" }).click();
          await dialog.waitFor({ state: "detached", timeout: STEP_MS });
          await c.getByText("being served").waitFor({ timeout: STEP_MS });
          const stored = await must(api, "GET", `/tickets/${ticket.id}`);
          check(stored.status === "serving" && stored.intake?.file_number === "D-2026-117", `the ticket: ${JSON.stringify(stored)}`);
        } finally {
          await ctx.close();
          await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REASON_QUESTION] });
        }
      },
    },
    {
      name: "pages console arabic: the console and the floor in Arabic are right to left (their bar starts on the right), ticket codes left to right, every word from the catalogue (axe, screenshots at 1280x800)",
      async run({ browser, api, screenshots }) {
        await resetDemo(api);
        const dir = screenshots ?? path.join(root, "test", "browser", ".artifacts", "screenshots", "pages");
        mkdirSync(dir, { recursive: true });
        await widgetJoin(api, { visitorName: "Fatima Zahra", phone: "+212612345678", intake: { reason: "account" } });
        await widgetJoin(api, { visitorName: "Youssef" });
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "ar-MA" });
        ctx.setDefaultTimeout(STEP_MS * 4);
        const rtl = (page) => page.evaluate(() => [document.documentElement.lang, document.documentElement.dir].join(" "));
        // The bar's title against the window's right edge, as a right-to-left page starts.
        const titleGap = (page) => page.locator("header.bar h1").evaluate((h) => innerWidth - h.getBoundingClientRect().right);
        try {
          const p = await ctx.newPage();
          await p.goto(`${api}/console?lang=ar`, { timeout: STEP_MS });
          await p.getByLabel("البريد الإلكتروني").fill(DEMO.operator.email, { timeout: STEP_MS });
          check((await rtl(p)) === "ar rtl", `the console's sign-in: ${await rtl(p)}`);
          await shotAndAxe(p, dir, "console-signin-ar-1280x800.png");
          await p.getByLabel("كلمة المرور").fill(DEMO.operator.password);
          await p.getByRole("button", { name: "تسجيل الدخول", exact: true }).click();
          // Signed in as an English-speaking operator, the page keeps the Arabic it was asked for.
          await p.getByRole("heading", { name: "اختر شباكك" }).waitFor({ timeout: STEP_MS });
          await p.getByRole("button", { name: /Guichet 1/ }).click({ timeout: STEP_MS });
          await p.getByRole("button", { name: /نداء التالي/ }).waitFor({ timeout: STEP_MS });
          await p.waitForSelector('[data-live="live"]', { timeout: STEP_MS });
          await p.waitForSelector('button[aria-keyshortcuts="N"]:not([disabled])', { timeout: STEP_MS });
          await p.waitForSelector(".line tbody [data-code]", { timeout: STEP_MS });
          check((await rtl(p)) === "ar rtl", `the console's desk: ${await rtl(p)}`);
          const gap = await titleGap(p);
          check(gap < 40, `the console's title stands ${Math.round(gap)}px from the right edge`);
          const lineCode = await p
            .locator(".line tbody [data-code]")
            .first()
            .evaluate((e) => [getComputedStyle(e).direction, e.textContent].join(" "));
          check(/^ltr [A-Z]-\d{3}$/.test(lineCode), `a waiting code in the line: ${lineCode}`);
          await p.getByRole("combobox", { name: "اللغة" }).waitFor({ timeout: STEP_MS });
          await p.keyboard.press("n");
          await p.waitForSelector(".current .ticket .code", { timeout: STEP_MS });
          const called = await p.locator(".current .ticket .code").evaluate((e) => getComputedStyle(e).direction);
          check(called === "ltr", `the called ticket's code is ${called}`);
          await p.getByText("التذكرة الحالية").first().waitFor({ timeout: STEP_MS });
          // No English word of the console's own left on the desk's screen.
          const english = await p.evaluate(() =>
            ["Call next", "Waiting", "Current ticket", "Recall", "Sign out", "Floor view"].filter((w) =>
              document.body.innerText.includes(w),
            ),
          );
          check(english.length === 0, `English words on the Arabic console: ${english.join(", ")}`);
          await shotAndAxe(p, dir, "console-desk-ar-1280x800.png");

          await p.goto(`${api}/console/floor?lang=ar`, { timeout: STEP_MS });
          await p.getByRole("heading", { name: "الشبابيك" }).waitFor({ timeout: STEP_MS });
          check((await rtl(p)) === "ar rtl", `the floor: ${await rtl(p)}`);
          const floorCode = await p
            .locator("[data-code]")
            .first()
            .evaluate((e) => getComputedStyle(e).direction);
          check(floorCode === "ltr", `a code on the floor is ${floorCode}`);
          await shotAndAxe(p, dir, "floor-ar-1280x800.png");
        } finally {
          await ctx.close();
        }
      },
    },
  ];
}

/** Screenshots of every page at 1280×800 and 768×1024, in English and French. */
/** A screenshot of the page as it is, then axe-core on it: every page shown is judged (no serious or critical violation). */
async function shotAndAxe(page, dir, name) {
  await page.screenshot({ path: path.join(dir, name) });
  await checkAxe(page, name);
}

export async function pageScreenshots({ browser, api, dir }) {
  mkdirSync(dir, { recursive: true });
  await resetDemo(api);
  const issued = [];
  // Ada gave a phone and a reason, and the branch marked her VIP: the console's card shows them.
  issued.push(await widgetJoin(api, { visitorName: "Ada Lovelace", phone: "+33612345678", intake: { reason: "account" } }));
  for (const name of [null, "Grace Hopper"]) issued.push(await widgetJoin(api, name ? { visitorName: name } : {}));
  await must(api, "POST", `/queues/${DEMO.queue.id}/operator-join`, { visitorName: "Marie Curie" });
  await must(api, "POST", `/tickets/${issued[0].id}/labels`, { label: "Wheelchair" });
  await must(api, "POST", `/tickets/${issued[0].id}/vip`);
  for (const lang of ["en", "fr"]) {
    for (const [w, h] of [
      [1280, 800],
      [768, 1024],
    ]) {
      const size = `${w}x${h}`;
      const ctx = await browser.newContext({ viewport: { width: w, height: h }, locale: lang === "fr" ? "fr-FR" : "en-GB" });
      ctx.setDefaultTimeout(STEP_MS * 4);
      try {
        const p = await ctx.newPage();
        await p.goto(`${api}/console?lang=${lang}`);
        await p.getByLabel(/^(Email|E-mail)$/).waitFor({ timeout: STEP_MS });
        await shotAndAxe(p, dir, `console-signin-${lang}-${size}.png`);
        await signIn(p, api, DEMO.operator);
        await p.getByRole("button", { name: /Guichet 1/ }).waitFor({ timeout: STEP_MS });
        // signIn opens /console without the query: the operator's own language (English) then holds.
        if (lang === "fr") await p.getByRole("combobox", { name: "Language" }).selectOption("fr");
        await shotAndAxe(p, dir, `console-desks-${lang}-${size}.png`);
        await openDesk(p, "Guichet 1");
        await p.waitForSelector(".line tbody .code-cell", { timeout: STEP_MS });
        await p
          .getByRole("button", { name: lang === "fr" ? /^Passer .+ en VIP$/ : /^Mark .+ VIP$/ })
          .first()
          .waitFor({ timeout: STEP_MS });
        await p.keyboard.press("n");
        await p.waitForSelector(".current .ticket .code", { timeout: STEP_MS });
        await p.waitForSelector(".current .intake", { timeout: STEP_MS });
        await shotAndAxe(p, dir, `console-desk-${lang}-${size}.png`);
        // The called ticket goes back to the front for the next screenshots.
        await p.keyboard.press("f");
        await p.waitForSelector(".current .ticket", { state: "detached", timeout: STEP_MS });
        await must(
          api,
          "POST",
          `/desks/${(await must(api, "GET", `/locations/${DEMO.location.id}/desks`)).find((d) => d.name === "Guichet 1").id}/close`,
        );

        await p.goto(`${api}/kiosk?location=${DEMO.location.id}&key=${DEMO.widgetKey.value}&lang=${lang}`);
        await p.waitForSelector(".service-button", { timeout: STEP_MS });
        await shotAndAxe(p, dir, `kiosk-${lang}-${size}.png`);
        await p.locator(".service-button").first().click();
        await p.waitForSelector(".questions", { timeout: STEP_MS });
        await shotAndAxe(p, dir, `kiosk-questions-${lang}-${size}.png`);
        await p.locator(".questions button[type=submit]").click();
        await p.waitForSelector("[data-code]", { timeout: STEP_MS });
        await shotAndAxe(p, dir, `kiosk-ticket-${lang}-${size}.png`);

        const t = issued[0];
        await p.goto(`${api}/t/${t.id}?lang=${lang}#token=${t.ticketToken}`);
        await p.waitForSelector("#code", { timeout: STEP_MS });
        await shotAndAxe(p, dir, `status-${lang}-${size}.png`);

        await signIn(p, api, DEMO.owner).catch(() => {});
        // The floor with a target wait, its clock 8 minutes on: the line near the target (amber).
        await must(api, "PATCH", `/business/queues/${DEMO.queue.id}`, { targetWaitMinutes: 10 });
        const f = await ctx.newPage();
        await f.clock.install({ time: Date.now() });
        await f.goto(`${api}/console/floor?lang=${lang}`);
        await f.waitForSelector("table, .notice", { timeout: STEP_MS });
        // The first reads (load, then the socket's open) settle first: each read sets the page's offset to the server's time.
        await f.getByText(lang === "fr" ? "En direct" : "Live", { exact: true }).waitFor({ timeout: STEP_MS });
        await new Promise((r) => setTimeout(r, 1500));
        await f.clock.fastForward("08:00");
        await f.waitForSelector('tr[data-level="amber"]', { timeout: STEP_MS });
        await shotAndAxe(f, dir, `floor-${lang}-${size}.png`);
        await f.close();
        await must(api, "PATCH", `/business/queues/${DEMO.queue.id}`, { targetWaitMinutes: null });

        // The branch's TV (docs/pages.md), both layouts, with Guichet 2 open and a call at Guichet 1.
        const board = `${api}/v1/widget/board?organization=${DEMO.organization.id}&location=${DEMO.location.id}&key=${DEMO.widgetKey.value}&language=${lang}&sound=0`;
        const guichet2 = (await must(api, "GET", `/locations/${DEMO.location.id}/desks`)).find((d) => d.name === "Guichet 2");
        await must(api, "POST", `/desks/${guichet2.id}/open`);
        const called = await must(api, "POST", `/desks/${guichet2.id}/call-next`, {});
        await p.goto(board);
        await p.locator("[data-location]").first().waitFor({ timeout: STEP_MS });
        await shotAndAxe(p, dir, `board-${lang}-${size}.png`);
        await p.goto(`${board}&layout=desks`);
        await p.locator("[data-desk]").first().waitFor({ timeout: STEP_MS });
        await shotAndAxe(p, dir, `board-desks-${lang}-${size}.png`);
        await must(api, "POST", `/tickets/${called.id}/return`, { position: "first" });
        await must(api, "POST", `/desks/${guichet2.id}/close`);
      } finally {
        await ctx.close();
      }
    }
  }
}

/** The appointment screens (widget booking, kiosk check-in) at 1280×800 and 768×1024, in English and French. */
export async function appointmentScreenshots({ browser, api, dir }) {
  mkdirSync(dir, { recursive: true });
  await bookable(api, 240);
  for (const lang of ["en", "fr"]) {
    for (const [w, h] of [
      [1280, 800],
      [768, 1024],
    ]) {
      const size = `${w}x${h}`;
      const ctx = await browser.newContext({ viewport: { width: w, height: h }, locale: lang === "fr" ? "fr-FR" : "en-GB" });
      try {
        const p = await ctx.newPage();
        const shot = (step) => shotAndAxe(p, dir, `widget-book-${step}-${lang}-${size}.png`);
        const booked = await bookInWidget(p, api, lang, { shot });
        await p.goto(`${booked.manage.replace("#", `?lang=${lang}#`)}`, { timeout: STEP_MS });
        await p.locator("[data-code]").waitFor({ timeout: STEP_MS });
        await shotAndAxe(p, dir, `appointment-page-${lang}-${size}.png`);
        const k = await ctx.newPage();
        await k.goto(kioskUrl(api, lang), { timeout: STEP_MS });
        await k.getByRole("button", { name: lang === "fr" ? "J'ai un rendez-vous" : "I have an appointment" }).click({ timeout: STEP_MS });
        await k.getByLabel(lang === "fr" ? "Votre code d'arrivée" : "Your check-in code").fill(booked.code);
        await shotAndAxe(k, dir, `kiosk-check-in-${lang}-${size}.png`);
        await k.keyboard.press("Enter");
        await k.waitForSelector(".issued [data-code]", { timeout: STEP_MS });
        await shotAndAxe(k, dir, `kiosk-appointment-ticket-${lang}-${size}.png`);
      } finally {
        await ctx.close();
      }
    }
  }
}

/**
 * The widget's join form with the service's required question (refused unanswered, then its ticket)
 * and the status page of a ticket taken in each language, opened without `?lang=` in an English
 * browser: EN and FR, 1280×800 and 768×1024 (issues 39, 45).
 */
export async function widgetJoinScreenshots({ browser, api, dir }) {
  mkdirSync(dir, { recursive: true });
  await resetDemo(api);
  await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REQUIRED_REASON] });
  try {
    for (const lang of ["en", "fr"]) {
      for (const [w, h] of [
        [1280, 800],
        [768, 1024],
      ]) {
        const size = `${w}x${h}`;
        const ctx = await browser.newContext({ viewport: { width: w, height: h }, locale: lang === "fr" ? "fr-FR" : "en-GB" });
        try {
          const p = await ctx.newPage();
          const config = {
            type: "join",
            queueId: DEMO.queue.id,
            organizationId: DEMO.organization.id,
            apiKey: DEMO.widgetKey.value,
            language: lang,
            apiBase: api,
          };
          await openWidget(p, api, lang, config, "join");
          const submit = p.locator("#widget button[type=submit]");
          await p.locator('#widget [data-question="reason"]').waitFor({ timeout: STEP_MS });
          await p.locator("#widget input[name=visitorName]").fill(lang === "fr" ? "Léa Martin" : "Ada Lovelace");
          await submit.click();
          await p.locator("#widget .err-in:not([hidden])").waitFor({ timeout: STEP_MS });
          await shotAndAxe(p, dir, `widget-join-questions-${lang}-${size}.png`);
          await p.locator('#widget input[value="card"]').check();
          await submit.click();
          await p.locator("#widget [data-ticket]").waitFor({ timeout: STEP_MS });
          await shotAndAxe(p, dir, `widget-join-ticket-${lang}-${size}.png`);
          const english = await browser.newContext({ viewport: { width: w, height: h }, locale: "en-GB" });
          try {
            const t = await widgetJoin(api, { visitorName: "Camille", language: lang, intake: { reason: "account" } });
            const s = await english.newPage();
            await s.goto(`${api}/t/${t.id}#token=${t.ticketToken}`);
            await s.waitForSelector(`html[lang="${lang}"] #code`, { timeout: STEP_MS });
            await shotAndAxe(s, dir, `status-ticket-language-${lang}-${size}.png`);
          } finally {
            await english.close();
          }
        } finally {
          await ctx.close();
        }
      }
    }
  } finally {
    await must(api, "PUT", `/services/${DEMO.service.id}/intake`, { fields: [REASON_QUESTION] });
  }
}

/** Whether `--only=` picks a case: its name contains one of the `|`-separated words (none given: every case). */
export const picked = (name, only) => !only || only.split("|").some((words) => name.includes(words));

/** Runs the cases (and the screenshots) against `api`; answers {passed, failed, figures}. */
export async function runPageSuite({ api, browser, screenshots, only, log = console.log }) {
  const figures = {};
  let passed = 0,
    failed = 0;
  for (const testCase of pageCases().filter((c) => picked(c.name, only))) {
    try {
      await testCase.run({ browser, api, figures, screenshots });
      passed += 1;
      log(`✓ ${testCase.name}`);
    } catch (err) {
      failed += 1;
      log(
        `✗ ${testCase.name}\n    ${String(err.message ?? err)
          .split("\n")
          .join("\n    ")}`,
      );
    }
  }
  if (screenshots && (!only || only.split("|").some((words) => "screenshots".includes(words)))) {
    try {
      await pageScreenshots({ browser, api, dir: screenshots });
      await appointmentScreenshots({ browser, api, dir: screenshots });
      await widgetJoinScreenshots({ browser, api, dir: screenshots });
      passed += 1;
      log(`✓ pages: screenshots of every page at 1280×800 and 768×1024 in English and French (${screenshots})`);
    } catch (err) {
      failed += 1;
      log(`✗ pages: screenshots\n    ${String(err.message ?? err)}`);
    }
  }
  if (figures.kioskToConsoleMs !== undefined) log(`  kiosk ticket → console: ${figures.kioskToConsoleMs} ms`);
  return { passed, failed, figures };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const api = process.argv.find((a) => a.startsWith("--api="))?.slice("--api=".length) ?? "http://127.0.0.1:8787";
  const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
  const screenshots = process.argv.includes("--update-screenshots")
    ? path.join(root, "test", "browser", "screenshots", "pages")
    : path.join(root, "test", "browser", ".artifacts", "screenshots", "pages");
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  let result = { passed: 0, failed: 1 };
  try {
    result = await runPageSuite({ api, browser, screenshots, only });
  } finally {
    await browser.close();
  }
  console.log(`${result.passed} passed, ${result.failed} failed`);
  process.exit(result.failed > 0 ? 1 : 0);
}
