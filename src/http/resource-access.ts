import type { Context } from "hono";
import type { Permission } from "../domain/permissions";
import { authorize, type Actor } from "./auth";
import type { AppEnv } from "./context";
import { ApiError, notFound } from "./errors";

/**
 * authorize() for a resource found by its own id: a caller outside the resource's
 * organization gets the same 404 as for an id that does not exist, message included, so
 * the answer never tells which ids are real.
 */
export async function authorizeOn(c: Context<AppEnv>, organizationId: string, permission: Permission, what: string): Promise<Actor> {
  try {
    return await authorize(c, organizationId, permission);
  } catch (err) {
    if (err instanceof ApiError && err.code === "NOT_FOUND") throw notFound(what);
    throw err;
  }
}
