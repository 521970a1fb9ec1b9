// The Worker `npm run dev` runs (scripts/dev.mjs: `wrangler dev scripts/dev-worker.ts`, the
// bindings of ../wrangler.toml): the production Worker's handlers and Durable Objects, plus
// one route only local development needs, none of it in src/ and never deployed (`wrangler
// deploy` builds src/index.ts; test/integration/dev-seed.test.ts proves the route absent there):
//
//   POST /__dev/demo-queue {id, organizationId, serviceId, name}
//
// creates the demo queue under the id the documentation's examples name
// (src/http/openapi-examples.ts), through the same createQueue as POST /v1/business/queues
// (room configured first, plan limit, letter), so the reference page's samples work against
// `npm run dev`. Idempotent: an existing queue with that id is answered as it is.
//
//   GET /   (ENVIRONMENT=development only) a landing page: the pages and the demo's sign-ins.
//
//   POST /__dev/clock {advanceMs} | {reset: true}   (ENVIRONMENT=development only)
//
// moves the service's clock (src/lib/clock.ts, which every time rule reads; the Durable Objects run
// in this Worker's isolate, so they share it) forward by advanceMs, or back to the system clock.
// The browser suite moves it with the page's clock (Playwright's page.clock), so waits, targets and
// alerts are tested without waiting for real time. Answers {data: {now, offsetMs}}.

import type { Env } from "../src/env";
import worker from "../src/index";
import { installClock, now } from "../src/lib/clock";
import { createQueue, describeQueue, findQueue } from "../src/tickets/queues";
import { DEMO } from "./seed.mjs";
import { depsOf } from "../src/http/deps";

// Every Durable Object class of wrangler.toml, or `wrangler dev` refuses to start.
export { EventHub, OrganizationLedger, QueueRoom, RateLimiter, Simulation, SocketHub } from "../src/index";

interface DemoQueue {
  id: string;
  organizationId: string;
  serviceId: string;
  name: string;
}

async function demoQueue(request: Request, env: Env): Promise<Response> {
  const input = (await request.json()) as DemoQueue;
  const existing = await env.DB.prepare("SELECT 1 AS found FROM queues WHERE id = ?").bind(input.id).first();
  const at = now();
  const queue = existing
    ? await describeQueue(depsOf(env), await findQueue(depsOf(env), input.id), at)
    : await createQueue(depsOf(env), input.organizationId, { serviceId: input.serviceId, name: input.name }, at, input.id);
  return Response.json({ data: queue }, { status: existing ? 200 : 201 });
}

// The development clock: the system clock plus what /__dev/clock added. Installed on the first
// call only (the integration tests import this module beside their own test clock).
let clockOffsetMs = 0;
let clockInstalled = false;

async function devClock(request: Request): Promise<Response> {
  if (!clockInstalled) {
    installClock(() => Date.now() + clockOffsetMs);
    clockInstalled = true;
  }
  const input = (await request.json().catch(() => null)) as { advanceMs?: unknown; reset?: unknown } | null;
  if (input?.reset === true) clockOffsetMs = 0;
  else if (typeof input?.advanceMs === "number" && Number.isFinite(input.advanceMs) && input.advanceMs >= 0)
    clockOffsetMs += input.advanceMs;
  else return Response.json({ error: { message: "Send {advanceMs: a number ≥ 0} or {reset: true}" } }, { status: 400 });
  return Response.json({ data: { now: new Date(now()).toISOString(), offsetMs: clockOffsetMs } });
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

/** What wrangler prints as "Ready on …": the pages of the demo and who signs in where (development only). */
function landing(request: Request): Response {
  const base = new URL(request.url).origin;
  const fr = /^fr\b/i.test(request.headers.get("Accept-Language") ?? "");
  const board = `${base}/v1/widget/board?organization=${DEMO.organization.id}&location=${DEMO.location.id}&key=${DEMO.widgetKey.value}`;
  const rows: [string, string, string][] = [
    [fr ? "Console du guichet" : "Counter console", `${base}/console`, `${DEMO.operator.email} / ${DEMO.operator.password}`],
    [fr ? "Vue de l'agence" : "Floor view", `${base}/console/floor`, `${DEMO.owner.email} / ${DEMO.owner.password}`],
    [fr ? "Borne" : "Kiosk", `${base}/kiosk?location=${DEMO.location.id}&key=${DEMO.widgetKey.value}`, fr ? "clé widget" : "widget key"],
    [fr ? "Écran d'appel" : "Display board", `${board}&language=${fr ? "fr" : "en"}`, DEMO.location.name],
    [fr ? "Référence de l'API" : "API reference", `${base}/v1/docs`, `X-API-Key: ${DEMO.apiKey.value}`],
  ];
  const html = `<!doctype html>
<html lang="${fr ? "fr" : "en"}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${fr ? "Démo" : "Demo"} — ${escapeHtml(DEMO.organization.name)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#13202c}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.5rem;border-bottom:1px solid #d5dde5;vertical-align:top}td{word-break:break-all}code{font-size:.9rem}a{color:#0b4f8a}</style>
</head><body><main>
<h1>${escapeHtml(DEMO.organization.name)} — ${fr ? "démo locale" : "local demo"}</h1>
<p>${fr ? "Les pages de l'agence" : "The branch's pages"} (${escapeHtml(DEMO.location.name)}, ${escapeHtml(DEMO.location.address)}). ${fr ? "Cette page n'existe qu'en développement." : "This page exists in development only."}</p>
<table><thead><tr><th scope="col">${fr ? "Page" : "Page"}</th><th scope="col">URL</th><th scope="col">${fr ? "Connexion" : "Sign in"}</th></tr></thead><tbody>
${rows.map(([name, href, who]) => `<tr><th scope="row">${escapeHtml(name)}</th><td><a href="${escapeHtml(href)}">${escapeHtml(href)}</a></td><td><code>${escapeHtml(who)}</code></td></tr>`).join("\n")}
</tbody></table></main></body></html>`;
  return new Response(html, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
    },
  });
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/" && request.method === "GET" && env.ENVIRONMENT === "development") return landing(request);
    if (url.pathname === "/__dev/clock" && request.method === "POST" && env.ENVIRONMENT === "development") return devClock(request);
    if (url.pathname === "/__dev/demo-queue" && request.method === "POST") {
      try {
        return await demoQueue(request, env);
      } catch (err) {
        return Response.json({ error: { message: String(err) } }, { status: 500 });
      }
    }
    return worker.fetch(request, env, ctx);
  },
  queue: worker.queue,
  scheduled: worker.scheduled,
} satisfies ExportedHandler<Env, Parameters<typeof worker.queue>[0]["messages"][number]["body"]>;
