import { createMiddleware } from "hono/factory";
import { isTwinOrganizationId } from "../lib/ids";
import type { AppEnv, Principal } from "./context";

/**
 * Every JSON answer says whether it came from live data or from the organization's test-mode twin
 * (docs/test-mode.md): `{"success": …, "livemode": true|false, …}`. Test mode is a test key's (or
 * a resource of a twin reached without a key, e.g. a visitor's join of a twin's queue).
 *
 * The envelope says it as `c.json` writes it (issue 43: rewriting every body afterwards cost a
 * clone, a read and a new Response, 0.1 ms a request). An answer not written by `c.json` (an
 * idempotent replay of an answer stored before livemode was written this way) is rewritten.
 */
export const livemodeInAnswers = createMiddleware<AppEnv>(async (c, next) => {
  const json = c.json;
  // Reflect.set: c.json's overloads take any JSON value; this wrapper hands each on unchanged but
  // an envelope's object, so typing it again would only restate Hono's signature.
  Reflect.set(c, "json", (object: unknown, ...rest: unknown[]) => {
    if (!isEnvelope(object)) return Reflect.apply(json, c, [object, ...rest]);
    c.set("livemodeSaid", true);
    const { success, ...others } = object;
    return Reflect.apply(json, c, [{ success, livemode: livemodeOf(c), ...others }, ...rest]);
  });
  await next();
  const res = c.res;
  if (c.get("livemodeSaid") || res.status === 101 || !res.headers.get("Content-Type")?.startsWith("application/json")) return;
  const text = await res.clone().text();
  const opening = /^\{"success":(true|false)/.exec(text);
  if (!opening || text.startsWith(`${opening[0]},"livemode":`)) return;
  const body = `${opening[0]},"livemode":${livemodeOf(c)}${text.slice(opening[0].length)}`;
  const headers = new Headers(res.headers);
  headers.delete("Content-Length");
  c.res = undefined;
  c.res = new Response(body, { status: res.status, statusText: res.statusText, headers });
});

/** The API's envelope: an object whose first key is `success`, a boolean (not yet saying livemode). */
function isEnvelope(object: unknown): object is { success: boolean } & Record<string, unknown> {
  if (typeof object !== "object" || object === null || Array.isArray(object)) return false;
  for (const key in object) return key === "success" && typeof Reflect.get(object, key) === "boolean" && !("livemode" in object);
  return false;
}

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
