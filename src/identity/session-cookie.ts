import type { Context } from "hono";
import { setCookie } from "hono/cookie";
import { SESSION_COOKIE } from "../http/auth";
import type { AppEnv } from "../http/context";
import { SESSION_ABSOLUTE_MS } from "../http/credentials/sessions";

/** The session cookie every sign-in sets (password, registration, single sign-on). */
export function setSessionCookie(c: Context<AppEnv>, token: string): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    secure: true,
    sameSite: "Lax",
    path: "/",
    maxAge: SESSION_ABSOLUTE_MS / 1000,
  });
}
