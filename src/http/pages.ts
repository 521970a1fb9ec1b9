// The pages people use in a browser (docs/pages.md): the Worker answers their paths with the HTML
// shells scripts/build-pages.mjs put in the static assets. Paths like /t/{ticketId} are not files,
// so the assets router passes them here and the shell is read from env.ASSETS. The pages call the
// public API only; their headers keep them from being framed or leaking their URL.
import type { Context, Hono } from "hono";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";
import PAGE_HEADERS from "./page-headers.json";

const PAGE_OF: Record<string, string> = {
  "/console": "console",
  "/console/": "console",
  "/console/floor": "floor",
  "/kiosk": "kiosk",
};

// Scripts and styles are our own hashed files; sockets and API calls go to this origin only. The
// same headers reach the files under /pages/ that the assets serve directly: scripts/build-pages.mjs
// writes them into public/_headers from this one file.
async function servePage(c: Context<AppEnv>, page: string): Promise<Response> {
  const asset = await c.env.ASSETS.fetch(new URL(`/pages/${page}`, c.req.url));
  // Not built (an install that skipped scripts/build-pages.mjs): say so rather than a blank page.
  if (!asset.ok) throw new ApiError("NOT_FOUND", "The pages are not built: run `node scripts/build-pages.mjs` (npm install does it)");
  const headers = new Headers({
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    ...PAGE_HEADERS,
  });
  return new Response(asset.body, { status: 200, headers });
}

/** The pages' paths (HTML for people, not API operations: the OpenAPI document leaves them out). */
export const PAGE_PATHS = [...Object.keys(PAGE_OF), "/t/:ticketId", "/appointments/:appointmentId"];

export function mountPages(app: Hono<AppEnv>): void {
  for (const [path, page] of Object.entries(PAGE_OF)) app.get(path, (c) => servePage(c, page));
  app.get("/t/:ticketId", (c) => servePage(c, "status"));
  // The manage link of an appointment's confirmation (src/appointments/announcements.ts).
  app.get("/appointments/:appointmentId", (c) => servePage(c, "appointment"));
}
