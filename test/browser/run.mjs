// Browser tests of the embeddable widget: real headless Chromium, the service under
// `wrangler dev` (scripts/dev.mjs), and a second origin serving the host pages.
// Usage: npm run test:browser   (CHROMIUM_PATH overrides /usr/bin/chromium)
//        npm run test:browser -- --update-screenshots   (rewrites the committed screenshots)
// The last line is always "N passed, N failed".
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { DEMO } from "../../scripts/seed.mjs";
import { picked, runPageSuite } from "./pages.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
// Every run writes its screenshots to the ignored artifacts folder; the committed ones under
// screenshots/ change only on request (codes and times differ from run to run).
const screenshots = process.argv.includes("--update-screenshots")
  ? path.join(root, "test", "browser", "screenshots")
  : path.join(root, "test", "browser", ".artifacts", "screenshots");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const STEP_MS = 15_000;
// A loaded machine applies the migrations slowly: BROWSER_SERVICE_START_MS gives it longer.
const SERVICE_START_MS = Number(process.env.BROWSER_SERVICE_START_MS) || 180_000;

// ---------------------------------------------------------------- plumbing

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function within(ms, what, promise) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function waitForUrl(url, ms, alive) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`the service exited before answering ${url}`);
    try {
      // Generous: on a loaded machine the first answers take tens of seconds (a 2 s probe never saw one).
      const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${url}`);
}

// ---------------------------------------------------------------- the host-page origin

/** Host pages by name, registered by the cases, plus a canned API under /stub for the widget's error and render paths. */
const pages = new Map();
const stub = { requests: [], routes: new Map(), sockets: [] };
/** TXT records served by the host server's DNS-over-HTTPS stand-in, by name. */
const dnsTxt = new Map();

/**
 * Just enough of RFC 6455 for the stub's live channel: the handshake, unfragmented text
 * frames out, masked text frames in (frames under 64 KiB are all these tests use).
 */
function acceptWebSocket(req, socket) {
  const accept = createHash("sha1").update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  const conn = {
    messages: [],
    send(text) {
      const payload = Buffer.from(text);
      const header =
        payload.length < 126 ? Buffer.from([0x81, payload.length]) : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]);
      socket.write(Buffer.concat([header, payload]));
    },
    drop: () => socket.destroy(),
  };
  let buffer = Buffer.alloc(0);
  socket.on("data", (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      let length = buffer.length >= 2 ? buffer[1] & 0x7f : 0,
        offset = 2;
      if (length === 126 && buffer.length >= 4) {
        length = buffer.readUInt16BE(2);
        offset = 4;
      }
      if (buffer.length < 2 || buffer.length < offset + 4 + length) return;
      const mask = buffer.subarray(offset, offset + 4);
      const data = Buffer.from(buffer.subarray(offset + 4, offset + 4 + length).map((b, i) => b ^ mask[i % 4]));
      const opcode = buffer[0] & 0x0f;
      buffer = buffer.subarray(offset + 4 + length);
      if (opcode === 8) return socket.end();
      if (opcode === 1) conn.messages.push(data.toString());
    }
  });
  socket.on("error", () => {});
  stub.sockets.push(conn);
}

async function until(what, predicate, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function hostPage({ config, attributes = "", api }) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host page</title>
<style>
  /* Hostile host styles: none of them may reach inside the widget. */
  body { font-family: serif; margin: 24px; background: #f3f4f6 }
  #widget { color: rgb(255, 0, 0); font-family: serif; font-size: 30px }
  .big, .qw, h2 { color: rgb(255, 0, 0) !important; border: 5px solid rgb(255, 0, 0) }
</style></head>
<body>
  <h2 id="outside">Host heading</h2>
  <div id="widget" ${attributes}></div>
  <script>window.tickets = [];${config ? `window.QueueWidgetConfig = ${config};` : ""}</script>
  <script async src="${api}/v1/embed.js"></script>
</body></html>`;
}

function startHostServer(port) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, `http://127.0.0.1:${port}`);
    if (url.pathname.startsWith("/page/")) {
      const html = pages.get(url.pathname.slice("/page/".length));
      res.writeHead(html ? 200 : 404, { "Content-Type": "text/html; charset=utf-8" });
      return res.end(html ?? "no such page");
    }
    if (url.pathname === "/dns-query") {
      // The service's DNS-over-HTTPS resolver in this run (DOH_RESOLVER_URL): TXT records the cases register.
      const records = dnsTxt.get((url.searchParams.get("name") ?? "").toLowerCase());
      const type = url.searchParams.get("type");
      const answer =
        records && type === "TXT" ? { Status: 0, Answer: records.map((data) => ({ type: 16, TTL: 60, data })) } : { Status: 3 };
      res.writeHead(200, { "Content-Type": "application/dns-json" });
      return res.end(JSON.stringify(answer));
    }
    if (url.pathname.startsWith("/stub/")) {
      const cors = {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Headers": "X-API-Key, Content-Type",
        "Access-Control-Allow-Methods": "GET, POST",
      };
      if (req.method === "OPTIONS") {
        res.writeHead(204, cors);
        return res.end();
      }
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        const route = `${req.method} ${url.pathname.slice("/stub".length)}`;
        stub.requests.push({ route, headers: req.headers, body: body ? JSON.parse(body) : null });
        const answer = stub.routes.get(route) ?? [
          404,
          { success: false, error: { code: "NOT_FOUND", message: `No route for ${route}`, details: {} } },
        ];
        res.writeHead(answer[0], { ...cors, "Content-Type": "application/json" });
        res.end(JSON.stringify(answer[1]));
      });
      return;
    }
    res.writeHead(404).end();
  });
  server.on("upgrade", (req, socket) => (req.url.split("?")[0] === "/stub/v1/widget/ws" ? acceptWebSocket(req, socket) : socket.destroy()));
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

const okBody = (data) => [200, { success: true, data }];
const STATUS = {
  queueId: "que_stub",
  name: "Passport desk",
  status: "active",
  waitingCount: 7,
  estimatedWaitMinutes: 21,
  nowServing: ["A-041", "A-040"],
};
const BOARD = {
  organizationId: "org_stub",
  generatedAt: "2026-01-01T10:00:00.000Z",
  queues: [
    {
      queueId: "que_stub",
      name: "Passport desk",
      called: [
        {
          displayCode: "A-042",
          status: "called",
          counter: "Counter 3",
          assignedTo: "Counter 3",
          calledAt: "2026-01-01T09:59:00.000Z",
          kind: "appointment",
        },
        {
          displayCode: "A-041",
          status: "serving",
          counter: "Oscar",
          assignedTo: "Oscar",
          calledAt: "2026-01-01T09:57:00.000Z",
          kind: "walk_in",
        },
      ],
      nextWaiting: ["A-043", "A-044", "A-045"],
    },
    {
      queueId: "que_stub2",
      name: "Payments",
      called: [
        { displayCode: "B-007", status: "called", counter: "Counter 1", assignedTo: "Counter 1", calledAt: "2026-01-01T09:58:00.000Z" },
      ],
      nextWaiting: ["B-008"],
    },
  ],
};

// ---------------------------------------------------------------- page helpers (run in the browser)

/** Text of the widget's shadow root, or null when there is none. */
const widgetText = (page, selector = "#widget") =>
  page.evaluate((sel) => document.querySelector(sel)?.shadowRoot?.textContent ?? null, selector);

async function waitForWidgetText(page, text, selector = "#widget") {
  await page.waitForFunction(
    ([sel, wanted]) => (document.querySelector(sel)?.shadowRoot?.textContent ?? "").includes(wanted),
    [selector, text],
    { timeout: STEP_MS },
  );
}

async function shot(page, name) {
  const host = page.locator("#widget");
  await host.screenshot({ path: path.join(screenshots, `${name}.png`), timeout: STEP_MS });
}

// ---------------------------------------------------------------- cases

/** Each case gets { page, api, host, stubBase } and throws on failure. */
const cases = [
  {
    name: "embed.js loads cross-origin and renders into a Shadow DOM inside #widget",
    async run({ page, api, host, open }) {
      const scriptResponse = page.waitForResponse((r) => r.url() === `${api}/v1/embed.js`, { timeout: STEP_MS });
      await open("cross-origin", hostPage({ api, config: `{ queueId: "que_missing_${Date.now()}" }` }));
      const res = await scriptResponse;
      check(res.status() === 200, `embed.js answered ${res.status()}`);
      check(res.headers()["access-control-allow-origin"] === "*", "embed.js has no CORS header");
      check(new URL(page.url()).origin !== new URL(api).origin, "the host page must be on another origin");
      await page.waitForFunction(() => document.querySelector("#widget")?.shadowRoot?.querySelector(".qw"), null, { timeout: STEP_MS });
      check((await page.evaluate(() => document.querySelector("#widget").children.length)) === 0, "the widget wrote into the light DOM");
      check(host !== api, "two origins");
      // Whatever the service answers for an unknown queue, the widget says so instead of staying blank.
      await page.waitForFunction(() => document.querySelector("#widget").shadowRoot.querySelector(".msg.err"), null, { timeout: STEP_MS });
    },
  },
  {
    name: "host styles do not reach the widget and widget styles do not leak out",
    async run({ page, api, stubBase, open }) {
      stub.routes.set("GET /v1/widget/queue/que_stub/status", okBody(STATUS));
      await open("styles", hostPage({ api, config: `{ queueId: "que_stub", apiBase: "${stubBase}" }` }));
      await waitForWidgetText(page, "Passport desk");
      const styles = await page.evaluate(() => {
        const inner = document.querySelector("#widget").shadowRoot;
        const css = (node) => getComputedStyle(node);
        return {
          title: css(inner.querySelector("h2")).color,
          count: css(inner.querySelector("[data-count]")).color,
          countBorder: css(inner.querySelector("[data-count]")).borderTopWidth,
          font: css(inner.querySelector(".qw")).fontFamily,
          outsideColor: css(document.querySelector("#outside")).color,
          outsideFontSize: css(document.querySelector("#outside")).fontSize,
        };
      });
      check(styles.title !== "rgb(255, 0, 0)" && styles.count !== "rgb(255, 0, 0)", `host colour leaked in: ${JSON.stringify(styles)}`);
      check(styles.countBorder === "0px", `host border leaked in: ${styles.countBorder}`);
      check(!/^serif$/.test(styles.font), `host font leaked in: ${styles.font}`);
      check(
        styles.outsideColor === "rgb(255, 0, 0)" && styles.outsideFontSize !== "17px",
        `widget styles leaked out: ${JSON.stringify(styles)}`,
      );
    },
  },
  {
    name: "status widget (stub API): name, waiting count, estimated wait, now serving; screenshot",
    async run({ page, api, stubBase, open }) {
      stub.routes.set("GET /v1/widget/queue/que_stub/status", okBody(STATUS));
      await open("status", hostPage({ api, config: `{ queueId: "que_stub", apiBase: "${stubBase}", primaryColor: "#0f766e" }` }));
      await waitForWidgetText(page, "Passport desk");
      const text = await widgetText(page);
      for (const part of ["Waiting", "7", "Estimated wait", "~21 min", "Now serving", "A-041", "A-040"])
        check(text.includes(part), `missing "${part}" in: ${text}`);
      check(!/null|undefined|NaN/.test(text), `stray value in: ${text}`);
      const region = await page.evaluate(() =>
        document.querySelector("#widget").shadowRoot.querySelector("[aria-live=polite]")?.getAttribute("role"),
      );
      check(region === "status", "no aria-live region");
      await shot(page, "status");
      const request = stub.requests.find((r) => r.route === "GET /v1/widget/queue/que_stub/status");
      check(request && !request.headers["x-api-key"], "the public status call must not send the API key");
    },
  },
  {
    name: "reads the data-* attributes when there is no QueueWidgetConfig (French, dark, compact, no wait)",
    async run({ page, api, stubBase, open }) {
      stub.routes.set("GET /v1/widget/queue/que_stub/status", okBody({ ...STATUS, status: "paused" }));
      await open(
        "attributes",
        hostPage({
          api,
          attributes: `data-queue="que_stub" data-language="fr" data-theme="dark" data-compact="true" data-show-estimated-wait="false" data-api-base="${stubBase}"`,
        }),
      );
      await waitForWidgetText(page, "Passport desk");
      const text = await widgetText(page);
      check(text.includes("En attente") && text.includes("En pause"), `not French: ${text}`);
      check(text.includes("Cette file est en pause"), `no paused message: ${text}`);
      check(!text.includes("Attente estimée"), "showEstimatedWait=false still shows the wait");
      const cls = await page.evaluate(() => document.querySelector("#widget").shadowRoot.querySelector(".qw").className);
      check(/\bdark\b/.test(cls) && /\bcompact\b/.test(cls), `classes: ${cls}`);
      await shot(page, "status-fr-dark-compact-paused");
    },
  },
  {
    name: "error state: an unknown queue says 'Queue not found' / 'File introuvable' (stub API)",
    async run({ page, api, stubBase, open }) {
      await open("not-found-en", hostPage({ api, config: `{ queueId: "que_nope", apiBase: "${stubBase}" }` }));
      await waitForWidgetText(page, "Queue not found");
      await open("not-found-fr", hostPage({ api, config: `{ queueId: "que_nope", apiBase: "${stubBase}", language: "fr" }` }));
      await waitForWidgetText(page, "File introuvable");
      const role = await page.evaluate(() => document.querySelector("#widget").shadowRoot.querySelector(".msg.err").getAttribute("role"));
      check(role === "alert", "the error is not announced");
    },
  },
  {
    name: "error state: a missing queueId is a clear configuration message",
    async run({ page, api, open }) {
      await open("no-queue", hostPage({ api, config: "{}" }));
      await waitForWidgetText(page, "queueId is missing");
    },
  },
  {
    name: "join widget (stub API): posts the form, shows the displayCode, calls onTicketCreated; screenshot",
    async run({ page, api, stubBase, open }) {
      stub.routes.set("GET /v1/widget/queue/que_stub/status", okBody(STATUS));
      stub.routes.set("POST /v1/widget/queue/que_stub/join", [
        201,
        {
          success: true,
          data: { id: "tkt_1", displayCode: "A-048", number: 48, status: "waiting", position: 8, estimatedWaitMinutes: 24 },
        },
      ]);
      await open(
        "join",
        hostPage({
          api,
          config: `{ type: "join", queueId: "que_stub", organizationId: "org_stub", apiKey: "qk_live_widget", showLogo: false, apiBase: "${stubBase}", onTicketCreated: (t) => window.tickets.push(t) }`,
        }),
      );
      await waitForWidgetText(page, "Take a ticket");
      await shot(page, "join");
      const form = page.locator("#widget form");
      await form.locator("input[name=visitorName]").fill("Ada", { timeout: STEP_MS });
      await form.locator("input[name=phone]").fill("+33 6 12 34 56 78", { timeout: STEP_MS });
      await form.locator("input[name=partySize]").fill("2", { timeout: STEP_MS });
      await form.locator("button[type=submit]").click({ timeout: STEP_MS });
      await waitForWidgetText(page, "A-048");
      const tickets = await page.evaluate(() => window.tickets);
      check(tickets.length === 1 && tickets[0].displayCode === "A-048", `onTicketCreated got ${JSON.stringify(tickets)}`);
      const post = stub.requests.find((r) => r.route === "POST /v1/widget/queue/que_stub/join");
      check(post.headers["x-api-key"] === "qk_live_widget", "join without the API key");
      check(
        // The visitor's language travels with the join (the ticket's SMS and receipt speak it).
        JSON.stringify(post.body) === JSON.stringify({ visitorName: "Ada", phone: "+33612345678", partySize: 2, language: "en" }),
        `join body ${JSON.stringify(post.body)}`,
      );
      await shot(page, "join-ticket");
    },
  },
  {
    name: "join failures (stub API): full queue message, and the server's message otherwise",
    async run({ page, api, stubBase, open }) {
      stub.routes.set("GET /v1/widget/queue/que_stub/status", okBody(STATUS));
      stub.routes.set("POST /v1/widget/queue/que_stub/join", [
        409,
        { success: false, error: { code: "QUEUE_FULL", message: "The queue is full", details: {} } },
      ]);
      await open("join-full", hostPage({ api, config: `{ type: "join", queueId: "que_stub", apiBase: "${stubBase}", language: "fr" }` }));
      await waitForWidgetText(page, "Prendre un ticket");
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      await waitForWidgetText(page, "Cette file est complète");
      stub.routes.set("POST /v1/widget/queue/que_stub/join", [
        400,
        { success: false, error: { code: "VALIDATION_ERROR", message: "Invalid value for phone: not E.164", details: { field: "phone" } } },
      ]);
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      await waitForWidgetText(page, "Invalid value for phone: not E.164");
    },
  },
  {
    name: "display board widget (stub API): called codes with counter, next codes, queues filter; screenshot",
    async run({ page, api, stubBase, open }) {
      stub.routes.set("GET /v1/widget/organization/org_stub/display-board", okBody(BOARD));
      await page.setViewportSize({ width: 1280, height: 720 });
      await open(
        "board",
        hostPage({
          api,
          config: `{ type: "board", organizationId: "org_stub", apiKey: "qk_live_widget", queues: ["que_stub"], theme: "dark", apiBase: "${stubBase}" }`,
        }),
      );
      await waitForWidgetText(page, "A-042");
      const text = await widgetText(page);
      for (const part of ["Passport desk", "Counter 3", "A-041", "Oscar", "Next", "A-043"])
        check(text.includes(part), `missing "${part}" in: ${text}`);
      check(!text.includes("Payments"), "the queues filter was ignored");
      // An appointment's call says so beside its code (the call's kind); a walk-in's does not.
      const marks = await page.evaluate(() =>
        [...document.querySelector("#widget").shadowRoot.querySelectorAll(".call")].map((c) => [
          c.getAttribute("data-called"),
          c.querySelector(".apt")?.textContent ?? null,
        ]),
      );
      check(
        JSON.stringify(marks) ===
          JSON.stringify([
            ["A-042", "Appointment"],
            ["A-041", null],
          ]),
        `appointment marks: ${JSON.stringify(marks)}`,
      );
      await shot(page, "board");
      await page.setViewportSize({ width: 900, height: 700 });
    },
  },
  {
    name: "board page /v1/widget/board runs embed.js under its CSP (French, from the Worker)",
    async run({ page, api }) {
      const violations = [];
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(`${api}/v1/widget/board?organization=${DEMO.organization.id}&key=${DEMO.apiKey.value}&language=fr&sound=0`, {
        timeout: STEP_MS,
      });
      await page.waitForFunction(() => document.querySelector("#widget")?.shadowRoot?.querySelector(".qw.board"), null, {
        timeout: STEP_MS,
      });
      check((await page.evaluate(() => document.documentElement.lang)) === "fr", "page language");
      // Until the display-board route exists the board shows its error state; after, the queues.
      await page.waitForFunction(
        () => document.querySelector("#widget").shadowRoot.querySelector(".msg.err, .grid, .lbl:not(:empty)"),
        null,
        { timeout: STEP_MS },
      );
      check(violations.length === 0, `CSP violations: ${violations.join(" | ")}`);
      await shot(page, "board-page");
    },
  },

  {
    name: "live (stub WebSocket): subscribes, renders pushed queue_update, announces the new code, reconnects",
    async run({ page, api, stubBase, open }) {
      stub.routes.set("GET /v1/widget/queue/que_stub/status", okBody(STATUS));
      await open("live", hostPage({ api, config: `{ queueId: "que_stub", apiBase: "${stubBase}" }` }));
      await waitForWidgetText(page, "Passport desk");
      const subscribed = (conn) => conn && conn.messages.some((m) => m === JSON.stringify({ action: "subscribe", queueId: "que_stub" }));
      await until("a subscribe message", () => subscribed(stub.sockets[0]));
      stub.sockets[0].send(JSON.stringify({ type: "queue_update", data: { ...STATUS, waitingCount: 6, nowServing: ["A-042", "A-041"] } }));
      await page.waitForFunction(
        () => document.querySelector("#widget").shadowRoot.querySelector("[data-count]").textContent === "6",
        null,
        { timeout: STEP_MS },
      );
      const spoken = await page.evaluate(() => document.querySelector("#widget").shadowRoot.querySelector("[aria-live]").textContent);
      check(spoken === "Now serving A-042", `aria-live said "${spoken}"`);
      stub.sockets[0].send(JSON.stringify({ type: "error", data: { code: "VALIDATION_ERROR" } }));
      stub.sockets[0].drop();
      // First retry after 0.5–1 s (backoff with jitter); it subscribes again.
      await until("a reconnection that subscribes again", () => subscribed(stub.sockets[1]), 5000);
      stub.sockets[1].send(
        JSON.stringify({ type: "queue_update", data: { ...STATUS, status: "closed", waitingCount: 0, nowServing: [] } }),
      );
      await waitForWidgetText(page, "This queue is closed.");
    },
  },
  {
    name: "board (stub WebSocket): a newly called code is shown, flashes, chimes and is announced",
    async run({ page, api, stubBase, open }) {
      await page.addInitScript(() => {
        window.oscillators = 0;
        const create = AudioContext.prototype.createOscillator;
        AudioContext.prototype.createOscillator = function () {
          window.oscillators += 1;
          return create.call(this);
        };
      });
      stub.routes.set("GET /v1/widget/organization/org_stub/display-board", okBody(BOARD));
      await open(
        "board-live",
        hostPage({
          api,
          config: `{ type: "board", organizationId: "org_stub", apiKey: "qk_live_widget", sound: true, language: "fr", apiBase: "${stubBase}" }`,
        }),
      );
      await waitForWidgetText(page, "Payments");
      await page.evaluate(() => {
        window.called = [];
        document.querySelector("#widget").addEventListener("queuewidget:called", (e) => window.called.push(e.detail.displayCode));
      });
      await until("subscriptions to both queues", () =>
        ["que_stub", "que_stub2"].every((q) =>
          stub.sockets[0]?.messages.includes(JSON.stringify({ action: "subscribe", queueId: q, view: "board" })),
        ),
      );
      check((await page.evaluate(() => window.oscillators)) === 0, "chimed on the first load");
      const next = structuredClone(BOARD);
      next.queues[0].called.unshift({
        displayCode: "A-043",
        status: "called",
        counter: "Guichet 2",
        calledAt: "2026-01-01T10:01:00.000Z",
      });
      next.queues[0].nextWaiting.shift();
      // The push carries the queue's whole board: no refetch of the display-board route.
      const fetched = stub.requests.length;
      stub.sockets[0].send(JSON.stringify({ type: "board_update", data: { ...next.queues[0], generatedAt: "2026-01-01T10:01:00.000Z" } }));
      await page.waitForFunction(() => window.called.includes("A-043"), null, { timeout: STEP_MS });
      const state = await page.evaluate(() => {
        const inner = document.querySelector("#widget").shadowRoot;
        return {
          fresh: [...inner.querySelectorAll(".call.new")].map((e) => e.dataset.called),
          spoken: inner.querySelector("[aria-live]").textContent,
          oscillators: window.oscillators,
          called: window.called,
        };
      });
      check(JSON.stringify(state.fresh) === '["A-043"]', `flashing: ${JSON.stringify(state)}`);
      check(state.spoken === "A-043, Guichet 2", `aria-live said "${state.spoken}"`);
      check(state.oscillators === 2, `chime oscillators: ${state.oscillators}`);
      check(JSON.stringify(state.called) === '["A-043"]', `called events: ${JSON.stringify(state.called)}`);
      check(
        stub.requests.length === fetched,
        `the board refetched over HTTP: ${JSON.stringify(stub.requests.slice(fetched).map((r) => r.route))}`,
      );
      await shot(page, "board-called");
    },
  },

  {
    name: "board speaks calls (stub WebSocket): after the chime, in order, none cut; a recall again; voice=0 chime only",
    async run({ page, api, stubBase, open }) {
      // The spy is installed before the page loads: it records each utterance's text and
      // language, and ends it 600 ms later as a voice would; an utterance started while
      // another is still being said is recorded as overlapping (a cut or a jumble).
      await page.addInitScript(() => {
        window.utterances = [];
        window.cancels = 0;
        let busy = false;
        SpeechSynthesis.prototype.speak = function (u) {
          window.utterances.push({ text: u.text, lang: u.lang, overlapping: busy });
          busy = true;
          setTimeout(() => {
            busy = false;
            if (u.onend) u.onend(new Event("end"));
          }, 600);
        };
        SpeechSynthesis.prototype.cancel = function () {
          window.cancels += 1;
        };
      });
      stub.routes.set("GET /v1/widget/organization/org_stub/display-board", okBody(BOARD));
      await open(
        "board-voice",
        hostPage({
          api,
          config: `{ type: "board", organizationId: "org_stub", apiKey: "qk_live_widget", sound: true, kiosk: true, language: "fr", apiBase: "${stubBase}" }`,
        }),
      );
      await waitForWidgetText(page, "Payments");
      await until("subscriptions to both queues", () =>
        ["que_stub", "que_stub2"].every((q) =>
          stub.sockets[0]?.messages.includes(JSON.stringify({ action: "subscribe", queueId: q, view: "board" })),
        ),
      );
      check((await page.evaluate(() => window.utterances.length)) === 0, "spoke the calls already on screen at load");
      const a = structuredClone(BOARD.queues[0]);
      a.called.unshift({ displayCode: "A-043", status: "called", counter: "Guichet 2", calledAt: "2026-01-01T10:01:00.000Z" });
      const b = structuredClone(BOARD.queues[1]);
      b.called.unshift({ displayCode: "B-008", status: "called", counter: "Guichet 1", calledAt: "2026-01-01T10:01:00.300Z" });
      // Two calls 300 ms apart.
      stub.sockets[0].send(JSON.stringify({ type: "board_update", data: { ...a, generatedAt: "2026-01-01T10:01:00.000Z" } }));
      await new Promise((r) => setTimeout(r, 300));
      stub.sockets[0].send(JSON.stringify({ type: "board_update", data: { ...b, generatedAt: "2026-01-01T10:01:00.300Z" } }));
      await page.waitForFunction(() => window.utterances.length >= 2, null, { timeout: STEP_MS });
      // A recall of A-043 (a new announcement time) is said again.
      a.called[0] = { ...a.called[0], calledAt: "2026-01-01T10:01:30.000Z" };
      stub.sockets[0].send(JSON.stringify({ type: "board_update", data: { ...a, generatedAt: "2026-01-01T10:01:30.000Z" } }));
      await page.waitForFunction(() => window.utterances.length >= 3, null, { timeout: STEP_MS });
      await new Promise((r) => setTimeout(r, 700));
      const said = await page.evaluate(() => ({ utterances: window.utterances, cancels: window.cancels }));
      check(
        JSON.stringify(said.utterances.map((u) => u.text)) ===
          JSON.stringify(["Numéro A 43, au guichet 2", "Numéro B 8, au guichet 1", "Numéro A 43, au guichet 2"]),
        `spoken: ${JSON.stringify(said)}`,
      );
      check(
        said.utterances.every((u) => u.lang === "fr-FR"),
        `languages: ${JSON.stringify(said.utterances.map((u) => u.lang))}`,
      );
      check(!said.utterances.some((u) => u.overlapping) && said.cancels === 0, `an utterance was cut: ${JSON.stringify(said)}`);

      // voice=0: the chime, no voice.
      await page.evaluate(() => {
        window.utterances = [];
      });
      stub.sockets.length = 0;
      await open(
        "board-no-voice",
        hostPage({
          api,
          config: `{ type: "board", organizationId: "org_stub", apiKey: "qk_live_widget", sound: true, voice: false, kiosk: true, language: "en", apiBase: "${stubBase}" }`,
        }),
      );
      await waitForWidgetText(page, "Payments");
      await until("the board's socket", () => stub.sockets[0]?.messages.length >= 2);
      stub.sockets[0].send(JSON.stringify({ type: "board_update", data: { ...a, generatedAt: "2026-01-01T10:02:00.000Z" } }));
      await waitForWidgetText(page, "A-043");
      await new Promise((r) => setTimeout(r, 1500));
      check((await page.evaluate(() => window.utterances.length)) === 0, "voice=0 still spoke");
    },
  },
  {
    name: "board voices (stub WebSocket): set to fr+en+ar, each call is said three times in order after one chime; a language without a voice (Arabic) is named below the board, not said; screenshot",
    async run({ page, api, stubBase, open }) {
      // The voices of the page's catalogue (GET /v1/widget/board?voices=fr,en,ar passes these as data-voices).
      const VOICES = [
        { language: "fr", name: "Français", locale: "fr-FR", say: "Numéro {code}, {counter}", sayCode: "Numéro {code}" },
        { language: "en", name: "English", locale: "en-GB", say: "Ticket {code}, {counter}", sayCode: "Ticket {code}" },
        { language: "ar", name: "العربية", locale: "ar-MA", say: "التذكرة {code}، {counter}", sayCode: "التذكرة {code}" },
      ];
      await page.setViewportSize({ width: 1280, height: 800 });
      // The spy: each utterance's text and language, ended 300 ms later; the voices this "device"
      // has come from the host page (window.deviceVoices, else all three); the chime's oscillators are counted.
      await page.addInitScript(() => {
        window.utterances = [];
        window.oscillators = 0;
        const create = AudioContext.prototype.createOscillator;
        AudioContext.prototype.createOscillator = function () {
          window.oscillators += 1;
          return create.call(this);
        };
        SpeechSynthesis.prototype.speak = function (u) {
          window.utterances.push({ text: u.text, lang: u.lang });
          setTimeout(() => u.onend && u.onend(new Event("end")), 300);
        };
        SpeechSynthesis.prototype.getVoices = function () {
          const langs = window.deviceVoices ?? ["fr-FR", "en-GB", "ar-MA"];
          return langs.map((lang) => ({ lang, name: lang, default: false, localService: true, voiceURI: lang }));
        };
      });
      const config = `{ type: "board", organizationId: "org_stub", apiKey: "qk_live_widget", sound: true, kiosk: true, language: "fr", voices: ${JSON.stringify(VOICES)}, apiBase: "${stubBase}" }`;
      const call = async (code, calledAt) => {
        const a = structuredClone(BOARD.queues[0]);
        a.called.unshift({ displayCode: code, status: "called", counter: "Guichet 2", calledAt });
        stub.sockets[0].send(JSON.stringify({ type: "board_update", data: { ...a, generatedAt: calledAt } }));
      };
      stub.routes.set("GET /v1/widget/organization/org_stub/display-board", okBody(BOARD));
      await open("board-voices", hostPage({ api, config }));
      await waitForWidgetText(page, "Payments");
      await until("the board's socket", () => stub.sockets[0]?.messages.length >= 2);
      check((await page.evaluate(() => window.utterances.length)) === 0, "spoke the calls already on screen at load");
      await call("A-043", "2026-01-01T10:01:00.000Z");
      await page.waitForFunction(() => window.utterances.length >= 3, null, { timeout: STEP_MS });
      await new Promise((r) => setTimeout(r, 800));
      const said = await page.evaluate(() => ({ utterances: window.utterances, oscillators: window.oscillators }));
      check(
        JSON.stringify(said.utterances) ===
          JSON.stringify([
            { text: "Numéro A 43, au guichet 2", lang: "fr-FR" },
            { text: "Ticket A 43, Guichet 2", lang: "en-GB" },
            { text: "التذكرة A 43، Guichet 2", lang: "ar-MA" },
          ]),
        `spoken: ${JSON.stringify(said)}`,
      );
      check(said.oscillators === 2, `one chime (two tones) for the call, got ${said.oscillators} oscillators`);
      check(
        (await page.locator("#widget").evaluate((w) => w.shadowRoot.querySelectorAll(".novoice").length)) === 0,
        "a missing voice named while all three are there",
      );

      // A device with French and English voices only: Arabic is not said, and the board says so.
      stub.sockets.length = 0;
      await open("board-voices-missing", hostPage({ api, config: `${config}; window.deviceVoices = ["fr-FR", "en-US"]` }));
      await waitForWidgetText(page, "Payments");
      await until("the board's socket", () => stub.sockets[0]?.messages.length >= 2);
      const notice = await page.locator("#widget").evaluate((w) => {
        const n = w.shadowRoot.querySelector(".novoice");
        return n && { text: n.textContent, missing: n.dataset.noVoice, role: n.getAttribute("role") };
      });
      check(
        notice && notice.missing === "ar" && notice.role === "status" && notice.text.startsWith("Aucune voix pour العربية sur cet écran"),
        `the missing voice's notice: ${JSON.stringify(notice)}`,
      );
      await call("B-044", "2026-01-01T10:02:00.000Z");
      await page.waitForFunction(() => window.utterances.length >= 2, null, { timeout: STEP_MS });
      await new Promise((r) => setTimeout(r, 1200));
      const partial = await page.evaluate(() => window.utterances.map((u) => u.lang));
      check(JSON.stringify(partial) === '["fr-FR","en-GB"]', `said with a voice missing: ${JSON.stringify(partial)}`);
      await shot(page, "board-voices-missing-ar");
    },
  },
  ...["fr", "en"].map((language) => ({
    name: `board layout=desks (${language}, 1280x800): one column per desk with its latest call, spoken in ${language}; screenshot`,
    async run({ page, api, stubBase, open }) {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.addInitScript(() => {
        window.utterances = [];
        SpeechSynthesis.prototype.speak = function (u) {
          window.utterances.push({ text: u.text, lang: u.lang });
          setTimeout(() => u.onend && u.onend(new Event("end")), 100);
        };
      });
      const board = structuredClone(BOARD);
      const at = new Date(Date.now() - 60_000).toISOString();
      board.generatedAt = new Date().toISOString();
      board.organization = { name: language === "fr" ? "Banque du Plateau" : "Plateau Bank", logoUrl: null };
      board.timeZone = "Africa/Abidjan";
      board.queues[0].name = language === "fr" ? "Opérations de caisse" : "Cash desk";
      board.queues[0].called = [
        { displayCode: "A-042", status: "called", counter: "Guichet 3", calledAt: at },
        { displayCode: "A-041", status: "serving", counter: "Guichet 1", calledAt: at },
      ];
      board.queues[1].name = language === "fr" ? "Conseil clientèle" : "Advice";
      board.queues[1].called = [{ displayCode: "B-007", status: "serving", counter: "Guichet 2", calledAt: at }];
      stub.routes.set("GET /v1/widget/organization/org_stub/display-board", okBody(board));
      await open(
        `board-desks-${language}`,
        `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><title>Board</title>
<style>html,body{margin:0;height:100%;background:#111827}#widget{min-height:100vh}</style></head>
<body><div id="widget"></div>
<script>window.QueueWidgetConfig = { type: "board", organizationId: "org_stub", apiKey: "qk_live_widget", language: "${language}", theme: "dark", sound: true, kiosk: true, layout: "desks", apiBase: "${stubBase}" };</script>
<script src="${api}/v1/board.js"></script><script src="${api}/v1/embed.js"></script></body></html>`,
      );
      await waitForWidgetText(page, "Guichet 3");
      const columns = await page.evaluate(() =>
        [...document.querySelector("#widget").shadowRoot.querySelectorAll("[data-desk]")].map((d) => [
          d.dataset.desk,
          d.querySelector("[data-called]")?.dataset.called,
        ]),
      );
      check(
        JSON.stringify(columns) ===
          JSON.stringify([
            ["Guichet 1", "A-041"],
            ["Guichet 2", "B-007"],
            ["Guichet 3", "A-042"],
          ]),
        `desk columns: ${JSON.stringify(columns)}`,
      );
      await until("the board's socket", () => stub.sockets[0]?.messages.length >= 2);
      const next = structuredClone(board.queues[1]);
      next.called.unshift({ displayCode: "B-008", status: "called", counter: "Guichet 2", calledAt: new Date().toISOString() });
      stub.sockets[0].send(JSON.stringify({ type: "board_update", data: { ...next, generatedAt: new Date().toISOString() } }));
      await page.waitForFunction(() => window.utterances.length >= 1, null, { timeout: STEP_MS });
      const said = await page.evaluate(() => window.utterances[0]);
      const expected =
        language === "fr" ? { text: "Numéro B 8, au guichet 2", lang: "fr-FR" } : { text: "Ticket B 8, Guichet 2", lang: "en-GB" };
      check(JSON.stringify(said) === JSON.stringify(expected), `spoken: ${JSON.stringify(said)}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      check(!overflow, "the desks layout overflows 1280 px");
      // The new call's column blinks three times (1 s each): take the picture once it is steady.
      await new Promise((r) => setTimeout(r, 3200));
      await shot(page, `board-desks-${language}`);
    },
  })),

  ...["fr", "en"].map((language) => ({
    name: `board closed screen (${language}, 1280x800): a calendar closure running now shows "closed" and the reopening time; screenshot`,
    async run({ page, api, stubBase, open }) {
      await page.setViewportSize({ width: 1280, height: 800 });
      const board = structuredClone(BOARD);
      const now = Date.now();
      board.generatedAt = new Date(now).toISOString();
      board.organization = { name: language === "fr" ? "Banque du Plateau" : "Plateau Bank", logoUrl: null };
      board.timeZone = "UTC";
      const end = new Date(Math.ceil((now + 3_600_000) / 1_800_000) * 1_800_000);
      board.closures = [{ start: new Date(now - 60_000).toISOString(), end: end.toISOString() }];
      stub.routes.set("GET /v1/widget/organization/org_stub/display-board", okBody(board));
      await open(
        `board-closed-${language}`,
        `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><title>Board</title>
<style>html,body{margin:0;height:100%;background:#111827}#widget{min-height:100vh}</style></head>
<body><div id="widget"></div>
<script>window.QueueWidgetConfig = { type: "board", organizationId: "org_stub", apiKey: "qk_live_widget", language: "${language}", theme: "dark", sound: true, kiosk: true, apiBase: "${stubBase}" };</script>
<script src="${api}/v1/board.js"></script><script src="${api}/v1/embed.js"></script></body></html>`,
      );
      const hhmm = `${String(end.getUTCHours()).padStart(2, "0")}:${String(end.getUTCMinutes()).padStart(2, "0")}`;
      await waitForWidgetText(page, language === "fr" ? `Réouverture à ${hhmm}` : `We reopen at ${hhmm}`);
      const text = await widgetText(page);
      check(text.includes(language === "fr" ? "Fermé" : "Closed"), `closed screen: ${text}`);
      check(!text.includes("A-042"), "calls are shown while closed");
      await shot(page, `board-closed-${language}`);
    },
  })),

  // ------------------------------------------------ against the real widget routes
  // A fresh organization per run (serverFixture), seeded through the API.
  {
    name: "status against the service: renders the queue's waiting count",
    async run({ page, api, open }) {
      const { queue, admin } = await serverFixture(api);
      await apiCall(api, admin, "POST", `/v1/widget/queue/${queue.id}/join`, { visitorName: "Count test" });
      await open("real-status", hostPage({ api, config: `{ queueId: "${queue.id}" }` }));
      await waitForWidgetText(page, queue.name);
      const status = await (await fetch(`${api}/v1/widget/queue/${queue.id}/status`)).json();
      check(status.data.waitingCount >= 1, `status ${JSON.stringify(status)}`);
      await page.waitForFunction(
        (n) => document.querySelector("#widget").shadowRoot.querySelector("[data-count]")?.textContent === String(n),
        status.data.waitingCount,
        { timeout: STEP_MS },
      );
      await shot(page, "real-status");
    },
  },
  {
    name: "status against the service: unknown queue → 'Queue not found'",
    async run({ page, api, open }) {
      await open("real-missing", hostPage({ api, config: `{ queueId: "que_doesnotexist00000000" }` }));
      await waitForWidgetText(page, "Queue not found");
    },
  },
  {
    name: "status against the service: updates live over the WebSocket when a ticket is added from the API",
    async run({ page, api, open }) {
      const { queue, admin } = await serverFixture(api);
      await open("real-live", hostPage({ api, config: `{ queueId: "${queue.id}" }` }));
      await waitForWidgetText(page, queue.name);
      const before = Number(
        await page.evaluate(() => document.querySelector("#widget").shadowRoot.querySelector("[data-count]").textContent),
      );
      await apiCall(api, admin, "POST", `/v1/widget/queue/${queue.id}/join`, { visitorName: "Live test" });
      // Well under the 30 s fallback poll: only the WebSocket can make it in time.
      await page.waitForFunction(
        (n) => Number(document.querySelector("#widget").shadowRoot.querySelector("[data-count]").textContent) === n,
        before + 1,
        { timeout: 10_000 },
      );
    },
  },
  {
    name: "join against the service: takes a ticket and calls onTicketCreated with its displayCode",
    async run({ page, api, open }) {
      const { organizationId, queue, widget } = await serverFixture(api);
      await open(
        "real-join",
        hostPage({
          api,
          config: `{ type: "join", queueId: "${queue.id}", organizationId: "${organizationId}", apiKey: "${widget}", onTicketCreated: (t) => window.tickets.push(t) }`,
        }),
      );
      await waitForWidgetText(page, "Take a ticket");
      await page.locator("#widget input[name=phone]").fill("+33612345678", { timeout: STEP_MS });
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      await page.waitForFunction(() => window.tickets.length === 1, null, { timeout: STEP_MS });
      const [ticket] = await page.evaluate(() => window.tickets);
      check(/^[A-Z]+-\d+$/.test(ticket.displayCode ?? "") && ticket.source === "widget", `ticket ${JSON.stringify(ticket)}`);
      await waitForWidgetText(page, ticket.displayCode);
      await shot(page, "real-join-ticket");
    },
  },
  {
    name: "status against the service: switches to French",
    async run({ page, api, open }) {
      const { queue } = await serverFixture(api);
      await open("real-fr", hostPage({ api, config: `{ queueId: "${queue.id}", language: "fr" }` }));
      await waitForWidgetText(page, "En attente");
      await waitForWidgetText(page, "Ouverte");
      check((await widgetText(page)).includes(queue.name), "queue name");
      await shot(page, "real-status-fr");
    },
  },
  {
    name: "display board against the service: shows a newly called code",
    async run({ page, api }) {
      const { organizationId, queue, admin, widget } = await serverFixture(api);
      await apiCall(api, admin, "POST", `/v1/widget/queue/${queue.id}/join`, { visitorName: "Board test" });
      await page.setViewportSize({ width: 1280, height: 720 });
      await page.goto(`${api}/v1/widget/board?organization=${organizationId}&key=${widget}&sound=0`, { timeout: STEP_MS });
      await waitForWidgetText(page, queue.name);
      await page.evaluate(() => {
        window.called = [];
        document.querySelector("#widget").addEventListener("queuewidget:called", (e) => window.called.push(e.detail.displayCode));
      });
      const called = await apiCall(api, admin, "POST", `/v1/queues/${queue.id}/call-next`, { serviceId: queue.serviceId });
      await page.waitForFunction((code) => window.called.includes(code), called.displayCode, { timeout: 10_000 });
      await waitForWidgetText(page, called.displayCode);
      await shot(page, "real-board");
      await page.setViewportSize({ width: 900, height: 700 });
    },
  },
  // A widget key locked to a verified domain (allowedOrigins). The page is served by the
  // browser itself under https://<domain>/ (page.route, no network), and talks to the local
  // service directly, so the browser sends its real Origin and enforces the CORS answer.
  {
    name: "origin lock: a widget key locked to a verified domain takes a ticket on that domain's page",
    async run({ page, api }) {
      const lock = await lockedFixture(api);
      await serveLockedPage(page, api, lock, lock.domain);
      await page.goto(`https://${lock.domain}/`, { timeout: STEP_MS });
      await waitForWidgetText(page, "Take a ticket");
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      await page.waitForFunction(() => window.tickets.length === 1, null, { timeout: STEP_MS });
      const [ticket] = await page.evaluate(() => window.tickets);
      check(ticket.source === "widget" && /^[A-Z]+-\d+$/.test(ticket.displayCode ?? ""), `ticket ${JSON.stringify(ticket)}`);
      const read = await readInfo(page, api, lock);
      check(read === "read 200", `the allowed origin could not read the organization (${read})`);
    },
  },
  {
    name: "origin lock: the same key on another origin is refused (403, no CORS) and no ticket is taken",
    async run({ page, api }) {
      const lock = await lockedFixture(api);
      await lock.count();
      const other = `elsewhere-${lock.run}.com`;
      await serveLockedPage(page, api, lock, other);
      await page.goto(`https://${other}/`, { timeout: STEP_MS });
      await waitForWidgetText(page, "Take a ticket");
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      await page.waitForTimeout(1000);
      check((await page.evaluate(() => window.tickets.length)) === 0, "a ticket was taken from a refused origin");
      // The service is reachable from this page (the public status answers CORS to anyone)…
      const open = await page.evaluate(
        async ([base, queue]) => (await fetch(`${base}/v1/widget/queue/${queue}/status`)).status,
        [api, lock.queueId],
      );
      check(open === 200, `public status from the other origin: ${open}`);
      // …but the locked key's answer cannot be read there, and the service refused it outright.
      const read = await readInfo(page, api, lock);
      check(read === "blocked: TypeError", `the page could read the answer (${read})`);
      const direct = await fetch(`${api}/v1/widget/organization/${lock.organizationId}/info`, {
        headers: { "X-API-Key": lock.key, Origin: `https://${other}` },
      });
      check(
        direct.status === 403 && !direct.headers.has("access-control-allow-origin"),
        `the service answered ${direct.status} with CORS ${direct.headers.get("access-control-allow-origin")}`,
      );
      const tickets = await apiCall(api, lock.admin, "GET", `/v1/queues/${lock.queueId}/tickets?status=waiting&limit=100`);
      check(tickets.length === lock.ticketsBefore(), `tickets in the queue: ${tickets.length}`);
    },
  },
  {
    name: "API reference: renders offline with the business flow first, X-API-Key as the credential and no online-only buttons",
    async run({ page, api }) {
      const external = [];
      page.on("request", (r) => {
        if (!r.url().startsWith(api) && !r.url().startsWith("data:")) external.push(r.url());
      });
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.goto(`${api}/v1/docs`, { timeout: STEP_MS });
      await page
        .getByText("The flow in six calls")
        .first()
        .waitFor({ timeout: STEP_MS * 2 });
      await page.getByText("X-API-Key").first().waitFor({ timeout: STEP_MS });
      const text = await page.innerText("body");
      for (const online of ["Ask AI", "Generate MCP", "Deploy", "Share"]) check(!text.includes(online), `the page shows "${online}"`);
      check(external.length === 0, `the page fetched outside the service: ${external.slice(0, 3).join(", ")}`);
      await page.screenshot({ path: path.join(screenshots, "api-reference.png"), timeout: STEP_MS });
      await page.setViewportSize({ width: 900, height: 700 });
    },
  },
  // ---- visitor
  {
    name: "visitor: the join widget follows its ticket: waiting → called (your turn) → served, survives a reload, leaves the queue",
    async run({ page, api, open }) {
      // An organization of its own: its queue starts empty and no earlier case's ticket is stored for it.
      const { organizationId, admin, widget, queue } = await serverFixture(api, { fresh: true });
      const fresh = queue;
      await apiCall(api, admin, "POST", `/v1/widget/queue/${fresh.id}/join`, { visitorName: "Ahead" });
      await page.addInitScript(() => {
        window.vibrations = [];
        navigator.vibrate = (p) => (window.vibrations.push(p), true);
      });
      const config = `{ type: "join", queueId: "${fresh.id}", organizationId: "${organizationId}", apiKey: "${widget}", showLogo: false, onTicketCreated: (t) => window.tickets.push(t) }`;
      await open("visitor", hostPage({ api, config }));
      await waitForWidgetText(page, "Take a ticket");
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      await page.waitForFunction(() => window.tickets.length === 1, null, { timeout: STEP_MS });
      const [ticket] = await page.evaluate(() => window.tickets);
      check(ticket.ticketToken === undefined, "onTicketCreated must not hand the token to the host page");
      await waitForWidgetText(page, "Position in line: 2");
      const kept = await page.evaluate((q) => JSON.parse(localStorage.getItem(`queueWidget:ticket:${q}`)), fresh.id);
      check(
        kept && kept.ticketId === ticket.id && /^[A-Za-z0-9_-]{44}$/.test(kept.token) && kept.queueId === fresh.id,
        `stored ${JSON.stringify(kept)}`,
      );
      await shot(page, "visitor-waiting");

      // The one ahead is called: the position moves live (well under the 15 s poll).
      await apiCall(api, admin, "POST", `/v1/queues/${fresh.id}/call-next`, { serviceId: queue.serviceId, counter: "Counter 2" });
      await waitForWidgetText(page, "Position in line: 1");
      await page.reload({ timeout: STEP_MS });
      await waitForWidgetText(page, "Position in line: 1");
      await waitForWidgetText(page, ticket.displayCode);

      await apiCall(api, admin, "POST", `/v1/queues/${fresh.id}/call-next`, { serviceId: queue.serviceId, counter: "Counter 2" });
      await waitForWidgetText(page, "It's your turn — go to Counter 2");
      check((await page.evaluate(() => window.vibrations.length)) === 1, "no vibration on your turn");
      await shot(page, "visitor-your-turn");
      await apiCall(api, admin, "POST", `/v1/tickets/${ticket.id}/serve`);
      await apiCall(api, admin, "POST", `/v1/tickets/${ticket.id}/complete`);
      await waitForWidgetText(page, "You have been served. Thank you!");
      check((await page.evaluate((q) => localStorage.getItem(`queueWidget:ticket:${q}`), fresh.id)) === null, "storage not cleared");
      await shot(page, "visitor-served");

      // Another ticket, then leave the queue with it.
      await page.locator("#widget .ticket button").click({ timeout: STEP_MS });
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      // The reload above emptied window.tickets: this is the page's first ticket since.
      await page.waitForFunction(() => window.tickets.length === 1, null, { timeout: STEP_MS });
      const [second] = await page.evaluate(() => window.tickets);
      check(second.id !== ticket.id, "the second join answered the first ticket");
      await waitForWidgetText(page, "Position in line: 1");
      const token = await page.evaluate((q) => JSON.parse(localStorage.getItem(`queueWidget:ticket:${q}`)).token, fresh.id);
      await page.locator("#widget [data-leave]").click({ timeout: STEP_MS });
      await waitForWidgetText(page, "You left the queue.");
      check(
        (await page.evaluate((q) => localStorage.getItem(`queueWidget:ticket:${q}`), fresh.id)) === null,
        "storage not cleared on leave",
      );
      const after = await fetch(`${api}/v1/widget/tickets/${second.id}`, { headers: { "X-Ticket-Token": token } });
      check(after.status === 404, `the left ticket still reads (${after.status})`);
      await shot(page, "visitor-left");
      await page.reload({ timeout: STEP_MS });
      await waitForWidgetText(page, "Take a ticket");
    },
  },
  {
    name: "visitor #45b widget late: I'm running late by 15 minutes: back in line at HH:MM, the honest estimate, gone once the queue's limit is reached",
    async run({ page, api, open }) {
      const { organizationId, admin, widget, queue } = await serverFixture(api, { fresh: true });
      const fresh = queue;
      await apiCall(api, admin, "POST", `/v1/widget/queue/${fresh.id}/join`, { visitorName: "Ahead" });
      const config = `{ type: "join", queueId: "${fresh.id}", organizationId: "${organizationId}", apiKey: "${widget}", showLogo: false, onTicketCreated: (t) => window.tickets.push(t) }`;
      await open("visitor-late", hostPage({ api, config }));
      await waitForWidgetText(page, "Take a ticket");
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      await page.waitForFunction(() => window.tickets.length === 1, null, { timeout: STEP_MS });
      const [ticket] = await page.evaluate(() => window.tickets);
      await waitForWidgetText(page, "Position in line: 2");
      const token = await page.evaluate((q) => JSON.parse(localStorage.getItem(`queueWidget:ticket:${q}`)).token, fresh.id);

      await page.locator("#widget [data-late] button").click({ timeout: STEP_MS });
      check((await page.locator("#widget [data-late-minutes]").count()) === 3, "the widget does not offer 10, 15 and 30 minutes");
      const asked = Date.now();
      await page.locator('#widget [data-late-minutes="15"]').click({ timeout: STEP_MS });
      await waitForWidgetText(page, "Your place is kept: back in line at");
      const read = await (await fetch(`${api}/v1/widget/tickets/${ticket.id}`, { headers: { "X-Ticket-Token": token } })).json();
      const until = Date.parse(read.data.deferredUntil);
      check(until > asked + 14 * 60_000 && until <= asked + 15 * 60_000 + 5_000, `deferred until ${read.data.deferredUntil}`);
      check(read.data.deferCount === 1, `deferCount ${read.data.deferCount}`);
      const shown = new Date(until).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
      await waitForWidgetText(page, `back in line at ${shown}`);
      // The answer's estimate is the honest one: never less than the time left before the return.
      check(read.data.estimatedWaitMinutes >= 14, `estimate ${read.data.estimatedWaitMinutes} min after a 15-minute deferral`);
      await shot(page, "visitor-late");

      // The queue allows two (maxDefers 2): the second is taken, the third is refused and the button goes.
      await page.locator("#widget [data-late] button").click({ timeout: STEP_MS });
      await page.locator('#widget [data-late-minutes="30"]').click({ timeout: STEP_MS });
      await page.waitForFunction(
        async ([a, id, tk]) =>
          (await (await fetch(`${a}/v1/widget/tickets/${id}`, { headers: { "X-Ticket-Token": tk } })).json()).data.deferCount === 2,
        [api, ticket.id, token],
        { timeout: STEP_MS, polling: 500 },
      );
      await page.locator("#widget [data-late] button").click({ timeout: STEP_MS });
      await page.locator('#widget [data-late-minutes="10"]').click({ timeout: STEP_MS });
      await waitForWidgetText(page, "A later turn is not possible now.");
      check((await page.locator("#widget [data-late]").count()) === 0, "the late button is still offered past the limit");
      await waitForWidgetText(page, "Position in line:");
      await shot(page, "visitor-late-limit");
    },
  },
  {
    name: "visitor: your turn in French",
    async run({ page, api, open }) {
      const { organizationId, admin, widget, queue } = await serverFixture(api, { fresh: true });
      const fresh = queue;
      const config = `{ type: "join", queueId: "${fresh.id}", organizationId: "${organizationId}", apiKey: "${widget}", showLogo: false, language: "fr" }`;
      await open("visitor-fr", hostPage({ api, config }));
      await waitForWidgetText(page, "Prendre un ticket");
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      await waitForWidgetText(page, "Position dans la file : 1");
      await apiCall(api, admin, "POST", `/v1/queues/${fresh.id}/call-next`, { serviceId: queue.serviceId, counter: "Counter 2" });
      await waitForWidgetText(page, "C'est votre tour — rendez-vous à : Counter 2");
      await shot(page, "visitor-your-turn-fr");
    },
  },
  {
    name: "visitor: the join widget in Spanish (issue 42, embed.js served minified): the form, the ticket, your turn, the ticket's language; screenshot",
    async run({ page, api, open }) {
      const served = await (await fetch(`${api}/v1/embed.js`)).text();
      check(!served.includes("QW_CATALOGUE") && served.split("\n").length < 40, "embed.js is not served minified");
      const { organizationId, admin, widget, queue } = await serverFixture(api, { fresh: true });
      const config = `{ type: "join", queueId: "${queue.id}", organizationId: "${organizationId}", apiKey: "${widget}", showLogo: false, language: "es", onTicketCreated: (t) => window.tickets.push(t) }`;
      await open("visitor-es", hostPage({ api, config }));
      await waitForWidgetText(page, "Sacar un turno");
      for (const words of ["Su nombre (opcional)", "Número de personas", "En espera", "Abierta"]) await waitForWidgetText(page, words);
      const joined = page.waitForResponse((r) => r.url().endsWith(`/v1/widget/queue/${queue.id}/join`), { timeout: STEP_MS });
      await page.locator("#widget button[type=submit]").click({ timeout: STEP_MS });
      const { data: created } = await (await joined).json();
      await waitForWidgetText(page, "Posición en la fila: 1");
      await waitForWidgetText(page, "Salir de la fila");
      // The visitor's read of the ticket: the join gave it the widget's language.
      const read = await fetch(`${api}/v1/widget/tickets/${created.id}`, { headers: { "X-Ticket-Token": created.ticketToken } });
      const ticket = (await read.json()).data;
      check(ticket?.language === "es", `the ticket's language is ${ticket?.language}`);
      await shot(page, "visitor-waiting-es");
      await apiCall(api, admin, "POST", `/v1/queues/${queue.id}/call-next`, { serviceId: queue.serviceId, counter: "Ventanilla 2" });
      await waitForWidgetText(page, "Es su turno: diríjase a Ventanilla 2");
      const text = await widgetText(page);
      check(!/Take a ticket|Your ticket|Leave the queue|undefined|null/.test(text), `English or a stray value in: ${text}`);
      await shot(page, "visitor-your-turn-es");
    },
  },
  // ---- board
  // The display board as a waiting room sees it: screenshots in both orientations and both
  // languages (stub data aged against the real clock), and the real service's push.
  ...[
    ["landscape", 1920, 1080],
    ["portrait", 1080, 1920],
  ].flatMap(([orientation, width, height]) =>
    ["en", "fr"].map((language) => ({
      name: `board screen (${orientation}, ${language}): organization, clock, waits, counters; old calls gone; empty state; kiosk; screenshot`,
      async run({ page, api, stubBase, open }) {
        const now = Date.now();
        const ago = (minutes) => new Date(now - minutes * 60_000).toISOString();
        const logo =
          "data:image/svg+xml," +
          encodeURIComponent(
            '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="120"><rect width="120" height="120" rx="24" fill="#2563eb"/><text x="60" y="80" font-size="64" text-anchor="middle" fill="#fff" font-family="sans-serif">M</text></svg>',
          );
        const fr = language === "fr";
        stub.routes.set(
          "GET /v1/widget/organization/org_screen/display-board",
          okBody({
            organizationId: "org_screen",
            organization: { name: fr ? "Mairie du 3e arrondissement" : "Town hall, 3rd district", logoUrl: logo },
            timeZone: "Europe/Paris",
            generatedAt: new Date(now).toISOString(),
            queues: [
              {
                queueId: "que_civil",
                name: fr ? "État civil" : "Civil registry",
                status: "active",
                waitingCount: 7,
                estimatedWaitMinutes: 18,
                estimatedWaitRange: { low: 12, high: 25 },
                called: [
                  { displayCode: "A-042", status: "called", counter: fr ? "Guichet 3" : "Desk 3", calledAt: ago(0.5) },
                  { displayCode: "A-041", status: "serving", counter: "Amina", calledAt: ago(2) },
                  { displayCode: "A-040", status: "serving", counter: fr ? "Guichet 1" : "Desk 1", calledAt: ago(4) },
                  { displayCode: "A-035", status: "serving", counter: fr ? "Guichet 2" : "Desk 2", calledAt: ago(12) },
                ],
                nextWaiting: ["A-043", "A-044", "A-045", "A-046", "A-047"],
                generatedAt: new Date(now).toISOString(),
              },
              {
                queueId: "que_passports",
                name: fr ? "Passeports" : "Passports",
                status: "active",
                waitingCount: 0,
                estimatedWaitMinutes: 0,
                estimatedWaitRange: { low: 0, high: 0 },
                called: [{ displayCode: "B-007", status: "serving", counter: fr ? "Guichet 5" : "Desk 5", calledAt: ago(9) }],
                nextWaiting: [],
                generatedAt: new Date(now).toISOString(),
              },
            ],
          }),
        );
        await page.setViewportSize({ width, height });
        await open(
          `board-${orientation}-${language}`,
          `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><title>Board</title>
<style>html,body{margin:0;height:100%;background:#111827}#widget{min-height:100vh}</style></head>
<body><div id="widget"></div>
<script>window.QueueWidgetConfig = { type: "board", organizationId: "org_screen", apiKey: "qk_live_widget", language: "${language}", theme: "dark", sound: true, kiosk: true, apiBase: "${stubBase}" };</script>
<script async src="${api}/v1/embed.js"></script></body></html>`,
        );
        await waitForWidgetText(page, "A-042");
        const seen = await page.evaluate(() => {
          const inner = document.querySelector("#widget").shadowRoot;
          return {
            text: inner.textContent,
            clock: inner.querySelector("[data-clock]")?.textContent,
            calls: [...inner.querySelectorAll("[data-called]")].map((e) => e.dataset.called),
            empty: [...inner.querySelectorAll("[data-empty]")].map((e) => e.closest("[data-queue]").dataset.queue),
            soundButton: inner.querySelector(".snd") !== null,
            logo: inner.querySelector(".blogo")?.naturalWidth ?? 0,
            overflow: document.documentElement.scrollWidth > window.innerWidth,
            bottom: Math.max(...[...inner.querySelectorAll("section.q")].map((e) => e.getBoundingClientRect().bottom)),
            top: inner.querySelector(".call .c").getBoundingClientRect().height,
          };
        });
        const t = fr
          ? [
              "Mairie du 3e arrondissement",
              "État civil",
              "En attente",
              "Attente estimée",
              "~18 min",
              "→ Guichet 3",
              "Aucun appel en cours",
              "Prochains",
            ]
          : [
              "Town hall, 3rd district",
              "Civil registry",
              "Waiting",
              "Estimated wait",
              "~18 min",
              "→ Desk 3",
              "No one called right now",
              "Next",
            ];
        for (const part of t) check(seen.text.includes(part), `missing "${part}" in: ${seen.text}`);
        const paris = (at) =>
          new Intl.DateTimeFormat(fr ? "fr-FR" : "en-GB", {
            hour: "2-digit",
            minute: "2-digit",
            hourCycle: "h23",
            timeZone: "Europe/Paris",
          }).format(at);
        check([paris(now), paris(now + 60_000)].includes(seen.clock), `clock "${seen.clock}" is not Paris time ${paris(now)}`);
        check(
          JSON.stringify(seen.calls) === '["A-042","A-041","A-040"]',
          `calls on screen: ${JSON.stringify(seen.calls)} (A-035 and B-007 are too old)`,
        );
        check(JSON.stringify(seen.empty) === '["que_passports"]', `empty state: ${JSON.stringify(seen.empty)}`);
        check(!seen.soundButton, "a kiosk shows no sound button");
        check(seen.logo > 0, "the logo did not load");
        check(!seen.overflow, "the board overflows the screen horizontally");
        check(seen.bottom <= height, `the queues end at ${seen.bottom}px, below the ${height}px screen`);
        // Legible at 3 m: the latest code is at least 9 % of the screen's short side.
        check(seen.top >= Math.min(width, height) * 0.09, `latest code only ${seen.top}px tall`);
        await shot(page, `board-${orientation}-${language}`);
        await page.setViewportSize({ width: 900, height: 700 });
      },
    })),
  ),
  {
    name: "board page against the service (kiosk): a call arrives by board_update with its counter, no HTTP refetch, no page error",
    async run({ page, api }) {
      const { organizationId, queue, admin, widget } = await serverFixture(api);
      await apiCall(api, admin, "POST", `/v1/widget/queue/${queue.id}/join`, { visitorName: "Board push" });
      const boardFetches = [];
      page.on("request", (r) => {
        if (r.url().includes("/display-board")) boardFetches.push(r.url());
      });
      const frames = [];
      page.on("websocket", (ws) => ws.on("framereceived", (f) => frames.push(String(f.payload))));
      await page.setViewportSize({ width: 1920, height: 1080 });
      await page.goto(`${api}/v1/widget/board?organization=${organizationId}&key=${widget}&kiosk=1&language=fr&callMinutes=3`, {
        timeout: STEP_MS,
      });
      await waitForWidgetText(page, queue.name);
      await until("a first board_update", () => frames.some((f) => f.includes('"board_update"')));
      check(
        (await page.evaluate(() => document.querySelector("#widget").shadowRoot.querySelector(".snd"))) === null,
        "kiosk: no sound button",
      );
      const called = await apiCall(api, admin, "POST", `/v1/queues/${queue.id}/call-next`, { counter: "Guichet 3" });
      await waitForWidgetText(page, `→ Guichet 3`);
      await waitForWidgetText(page, called.displayCode);
      check(boardFetches.length === 1, `the board fetched the display-board route ${boardFetches.length} times`);
      await page.setViewportSize({ width: 900, height: 700 });
    },
  },
  // ---- deskmodel
  {
    name: "board page against the service: a desk call shows 'A-0xx → Guichet 3', a recall flashes it again; screenshot",
    async run({ page, api }) {
      const { organizationId, queue, admin, widget } = await serverFixture(api, { fresh: true });
      const [locationId] = (await apiCall(api, admin, "GET", `/v1/services/${queue.serviceId}`)).locationIds;
      const desk = await apiCall(api, admin, "POST", `/v1/locations/${locationId}/desks`, {
        name: "Desk 3",
        displayName: "Guichet 3",
        queueIds: [queue.id],
      });
      await apiCall(api, admin, "POST", `/v1/desks/${desk.id}/open`);
      await apiCall(api, admin, "POST", `/v1/queues/${queue.id}/operator-join`, {});
      await apiCall(api, admin, "POST", `/v1/queues/${queue.id}/operator-join`, {});
      await page.setViewportSize({ width: 1280, height: 720 });
      await page.goto(`${api}/v1/widget/board?organization=${organizationId}&key=${widget}&kiosk=1&language=fr&callMinutes=3`, {
        timeout: STEP_MS,
      });
      await waitForWidgetText(page, queue.name);
      await page.evaluate(() => {
        window.called = [];
        document.querySelector("#widget").addEventListener("queuewidget:called", (e) => window.called.push(e.detail));
      });
      const called = await apiCall(api, admin, "POST", `/v1/desks/${desk.id}/call-next`);
      check(called.deskId === desk.id && called.counter === "Guichet 3", `desk call: ${JSON.stringify(called)}`);
      await waitForWidgetText(page, "→ Guichet 3");
      await waitForWidgetText(page, called.displayCode);
      await page.waitForFunction((code) => window.called.some((c) => c.displayCode === code), called.displayCode, { timeout: STEP_MS });
      // Let the first flash end, then recall: the same code is announced and flashes again.
      await new Promise((r) => setTimeout(r, 1_200));
      await page.evaluate(() => (window.called = []));
      const recalled = await apiCall(api, admin, "POST", `/v1/tickets/${called.id}/recall`);
      check(recalled.recallCount === 1 && recalled.status === "called", `recall: ${JSON.stringify(recalled)}`);
      await page.waitForFunction((code) => window.called.some((c) => c.displayCode === code), called.displayCode, { timeout: STEP_MS });
      const state = await page.evaluate(() => {
        const inner = document.querySelector("#widget").shadowRoot;
        return {
          fresh: [...inner.querySelectorAll(".call.new")].map((e) => e.dataset.called),
          text: [...inner.querySelectorAll(".call.new")].map((e) => e.textContent).join(" | "),
          announced: window.called.map((c) => `${c.displayCode}|${c.counter}`),
        };
      });
      check(JSON.stringify(state.fresh) === JSON.stringify([called.displayCode]), `flashing after the recall: ${JSON.stringify(state)}`);
      check(JSON.stringify(state.announced) === JSON.stringify([`${called.displayCode}|Guichet 3`]), `announced: ${JSON.stringify(state)}`);
      check(state.text.includes(called.displayCode) && state.text.includes("→ Guichet 3"), `the flashing call reads: ${state.text}`);
      await shot(page, "board-desk-recall");
      await page.setViewportSize({ width: 900, height: 700 });
    },
  },
];

// ---------------------------------------------------------------- service fixtures

/** Serves the join page at https://<host>/ from the browser itself; the widget calls the service directly. */
async function serveLockedPage(page, api, lock, host) {
  const config = `{ type: "join", queueId: "${lock.queueId}", organizationId: "${lock.organizationId}", apiKey: "${lock.key}", onTicketCreated: (t) => window.tickets.push(t) }`;
  await page.route(`https://${host}/**`, (route) =>
    route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: hostPage({ api, config }) }),
  );
}

/** What the page gets when it reads the organization with the locked key. */
function readInfo(page, api, lock) {
  return page.evaluate(
    async ([base, org, key]) => {
      try {
        const res = await fetch(`${base}/v1/widget/organization/${org}/info`, { headers: { "X-API-Key": key } });
        return `read ${res.status}`;
      } catch (err) {
        return `blocked: ${err.name}`;
      }
    },
    [api, lock.organizationId, lock.key],
  );
}

let locked = null;
/**
 * An organization with a verified domain and a widget key locked to it. The domain is verified
 * through the API with the dns method: the service asks its DoH resolver, which in this run is
 * the host server's stand-in (DOH_RESOLVER_URL), answering the TXT record registered here.
 */
async function lockedFixture(api) {
  if (locked) return locked;
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const registered = await apiCall(api, null, "POST", "/v1/auth/register", {
    email: `locked-${run}@example.com`,
    password: "browser tests password",
    firstName: "Lou",
    lastName: "Locked",
    accountType: "business",
  });
  const token = registered.session.token;
  const org = await apiCall(api, token, "POST", "/v1/organizations", { name: "Locked Bakery", slug: `locked-${run}`, type: "retail" });
  const admin = (await apiCall(api, token, "POST", `/v1/organizations/${org.id}/api-keys`, { name: "Admin", permissions: ["admin"] })).key;
  const domain = `shop-${run}.com`;
  const { token: proof } = await apiCall(api, admin, "POST", "/v1/business/verification/generate-token");
  dnsTxt.set(domain, [`"service-verification=${proof}"`]);
  const verified = await apiCall(api, admin, "POST", "/v1/business/verification/verify", { domain, method: "dns" });
  check(verified.status === "verified", `domain ${JSON.stringify(verified)}`);
  const key = (
    await apiCall(api, admin, "POST", `/v1/organizations/${org.id}/api-keys`, {
      name: "Site",
      permissions: ["widget"],
      allowedOrigins: [`https://${domain}`],
    })
  ).key;
  const location = await apiCall(api, admin, "POST", "/v1/locations", {
    organizationId: org.id,
    name: "Shop",
    address: "2 rue du Pain",
    latitude: 48.85,
    longitude: 2.35,
  });
  const service = await apiCall(api, admin, "POST", "/v1/services", {
    name: "Bread",
    locationIds: [location.id],
    serviceTypeId: "st_retail_checkout",
  });
  const queue = await apiCall(api, admin, "POST", "/v1/business/queues", { serviceId: service.id, name: "Bread counter" });
  let waiting = 0;
  return (locked = {
    run,
    domain,
    organizationId: org.id,
    key,
    admin,
    queueId: queue.id,
    // Tickets the allowed-origin case took, so the refused case knows how many to expect.
    ticketsBefore: () => waiting,
    async count() {
      waiting = (await apiCall(api, admin, "GET", `/v1/queues/${queue.id}/tickets?status=waiting&limit=100`)).length;
    },
  });
}

async function apiCall(api, auth, method, pathname, body) {
  const headers = { ...(body ? { "Content-Type": "application/json" } : {}) };
  if (auth?.startsWith("qk_")) headers["X-API-Key"] = auth;
  else if (auth) headers.Authorization = `Bearer ${auth}`;
  const res = await fetch(`${api}${pathname}`, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(STEP_MS),
  });
  const json = await res.json();
  check(json.success, `${method} ${pathname} → ${res.status} ${JSON.stringify(json.error)}`);
  return json.data;
}

let fixture = null;
/**
 * A fresh organization for this run, made through the API as an integrator would: an owner,
 * an admin key (for the test's own calls), a widget key (for the pages), a location, a
 * service and a queue. Fresh each run, so the starter plan's monthly tickets never run out.
 */
async function serverFixture(api, { fresh = false } = {}) {
  if (fixture && !fresh) return fixture;
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const registered = await apiCall(api, null, "POST", "/v1/auth/register", {
    email: `widget-${run}@example.com`,
    password: "browser tests password",
    firstName: "Wanda",
    lastName: "Widget",
    accountType: "business",
  });
  const token = registered.session.token;
  const org = await apiCall(api, token, "POST", "/v1/organizations", { name: "Widget Bakery", slug: `widget-${run}`, type: "retail" });
  const admin = (await apiCall(api, token, "POST", `/v1/organizations/${org.id}/api-keys`, { name: "Counter 2", permissions: ["admin"] }))
    .key;
  const widget = (await apiCall(api, token, "POST", `/v1/organizations/${org.id}/api-keys`, { name: "Counter 1", permissions: ["widget"] }))
    .key;
  const location = await apiCall(api, token, "POST", "/v1/locations", {
    organizationId: org.id,
    name: "Shop",
    address: "1 rue du Pain",
    latitude: 48.85,
    longitude: 2.35,
  });
  const service = await apiCall(api, token, "POST", "/v1/services", {
    name: "Bread",
    locationIds: [location.id],
    serviceTypeId: "st_retail_checkout",
  });
  const queue = await apiCall(api, token, "POST", "/v1/business/queues", { serviceId: service.id, name: "Bread counter" });
  const made = { organizationId: org.id, admin, widget, queue: { id: queue.id, name: queue.name, serviceId: service.id } };
  if (!fresh) fixture = made;
  return made;
}

// ---------------------------------------------------------------- main

const children = [];
let browser = null;
let hostServer = null;
const userDataDir = mkdtempSync(path.join(os.tmpdir(), "widget-chromium-"));
let serviceLog = "";

async function cleanup() {
  await browser?.close().catch(() => {});
  hostServer?.close();
  for (const child of children) {
    // dev.mjs forwards signals to wrangler; the process group catches workerd too.
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      /* already gone */
    }
  }
  rmSync(userDataDir, { recursive: true, force: true });
}

async function main() {
  mkdirSync(screenshots, { recursive: true });
  const [apiPort, hostPort] = [Number(process.env.BROWSER_API_PORT) || (await freePort()), await freePort()];
  const api = `http://127.0.0.1:${apiPort}`;
  const hostOrigin = `http://127.0.0.1:${hostPort}`;
  const stubBase = `${hostOrigin}/stub`;

  const service = spawn(
    process.execPath,
    [
      path.join(root, "scripts", "dev.mjs"),
      "--port",
      String(apiPort),
      "--ip",
      "127.0.0.1",
      "--var",
      `DOH_RESOLVER_URL:${hostOrigin}/dns-query`,
    ],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    },
  );
  children.push(service);
  let serviceAlive = true;
  service.on("exit", () => {
    serviceAlive = false;
  });
  for (const stream of [service.stdout, service.stderr])
    stream.on("data", (d) => {
      serviceLog = (serviceLog + d).slice(-20_000);
    });

  hostServer = await startHostServer(hostPort);
  console.log(`service ${api}, host pages ${hostOrigin}: waiting for the service…`);
  await waitForUrl(`${api}/v1/openapi.json`, SERVICE_START_MS, () => serviceAlive);

  browser = await within(
    STEP_MS * 2,
    "launching chromium",
    chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--autoplay-policy=no-user-gesture-required",
        // The origin-lock cases serve a page as https://<verified domain>/ from the browser itself;
        // it must reach the service on 127.0.0.1, which local-network access checks would refuse.
        "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults",
      ],
      viewport: { width: 900, height: 700 },
    }),
  );

  let passed = 0,
    failed = 0;
  // `npm run test:browser -- --only=<words>` runs the cases whose name contains them (`a|b`: either).
  const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
  for (const testCase of cases.filter((c) => picked(c.name, only))) {
    const page = await browser.newPage();
    const pageErrors = [];
    page.on("pageerror", (err) => pageErrors.push(String(err)));
    stub.requests.length = 0;
    stub.routes.clear();
    stub.sockets.length = 0;
    const open = async (name, html) => {
      pages.set(name, html);
      await page.goto(`${hostOrigin}/page/${name}`, { timeout: STEP_MS });
    };
    try {
      await within(STEP_MS * 4, testCase.name, testCase.run({ page, api, host: hostOrigin, stubBase, open }));
      check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join(" | ")}`);
      passed += 1;
      console.log(`✓ ${testCase.name}`);
    } catch (err) {
      failed += 1;
      console.log(
        `✗ ${testCase.name}\n    ${String(err.message ?? err)
          .split("\n")
          .join("\n    ")}`,
      );
    } finally {
      await page.close().catch(() => {});
    }
  }
  // The pages' flows (test/browser/pages.mjs) in a browser of their own: each actor needs its own context.
  const pagesBrowser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  try {
    const pagesResult = await runPageSuite({ api, browser: pagesBrowser, screenshots: path.join(screenshots, "pages"), only });
    passed += pagesResult.passed;
    failed += pagesResult.failed;
  } finally {
    await pagesBrowser.close();
  }
  return { passed, failed };
}

let result = { passed: 0, failed: 1 };
try {
  // The service's start counts too: a loaded machine gets BROWSER_SERVICE_START_MS more.
  // 20 minutes: the suite took 449 s for 64 cases on the quiet machine (session 14) and has grown since.
  result = await within(20 * 60_000 + (Number(process.env.BROWSER_SERVICE_START_MS) || 0), "the whole browser run", main());
} catch (err) {
  console.log(`fatal: ${err.message ?? err}`);
  if (serviceLog) console.log(`--- service output (tail) ---\n${serviceLog.slice(-4000)}`);
} finally {
  await cleanup();
}
console.log(`${result.passed} passed, ${result.failed} failed`);
process.exit(result.failed > 0 ? 1 : 0);
