import { createMiddleware } from "hono/factory";
import { isTwinOrganizationId } from "../lib/ids";
import type { AppEnv, Principal } from "./context";

/**
 * Every JSON answer says whether it came from live data or from the organization's test-mode twin
 * (docs/test-mode.md): `{"success": …, "livemode": true|false, …}`. Test mode is a test key's (or
 * a resource of a twin reached without a key, e.g. a visitor's join of a twin's queue).
 */
export const livemodeInAnswers = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const res = c.res;
  if (res.status === 101 || !res.headers.get("Content-Type")?.startsWith("application/json")) return;
  const text = await res.clone().text();
  const opening = /^\{"success":(true|false)/.exec(text);
  if (!opening) return;
  const body = `${opening[0]},"livemode":${livemodeOf(c)}${text.slice(opening[0].length)}`;
  const headers = new Headers(res.headers);
  headers.delete("Content-Length");
  c.res = undefined;
  c.res = new Response(body, { status: res.status, statusText: res.statusText, headers });
});

function livemodeOf(c: Parameters<Parameters<typeof createMiddleware<AppEnv>>[0]>[0]): boolean {
  const principal = c.get("principal");
  if (principal?.kind === "apiKey") return !isTwinOrganizationId(principal.organizationId);
  const guarded = c.get("guarded");
  return !(guarded && isTwinOrganizationId(guarded.organizationId));
}

/**
 * A test-mode twin's resources are reached only with a key of that twin (docs/test-mode.md):
 * any other caller (a session, which is always live, an anonymous visitor of a public route, a
 * live key, another twin's key) meets a twin's queue, QR code or NFC tag as an unknown id.
 */
export function reachesOrganization(principal: Principal | undefined, organizationId: string): boolean {
  if (!isTwinOrganizationId(organizationId)) return true;
  return principal?.kind === "apiKey" && principal.organizationId === organizationId;
}
