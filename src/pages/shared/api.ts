// The pages' one door to the API: same origin, the session cookie (console, floor) or a widget
// key / ticket token (kiosk, status page), the envelope unwrapped. Types come from the generated
// client (clients/typescript/schema.d.ts, type-only: nothing of it reaches the bundle).
import type { components } from "../../../clients/typescript/schema";

export type Schemas = components["schemas"];
export type Ticket = Schemas["Ticket"];
export type Queue = Schemas["Queue"];
export type Desk = Schemas["Desk"];
export type Location = Schemas["Location"];
export type Service = Schemas["Service"];
export type User = Schemas["User"];
export type Membership = Schemas["Membership"];
export type VisitorTicket = Schemas["VisitorTicket"];
export type WidgetTicket = Schemas["WidgetTicket"];
export type WidgetOrganizationInfo = Schemas["WidgetOrganizationInfo"];
export type WidgetQueueStatus = Schemas["WidgetQueueStatus"];
export type ServiceOutcome = Schemas["ServiceOutcome"];

/** A refusal of the API, carrying its code and message (shown to the user as the API words it). */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
}

/** Extra headers every call of this page sends (the organization, a widget key). */
export const defaultHeaders: Record<string, string> = {};

export async function api<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { ...defaultHeaders, ...options.headers };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(`/v1${path}`, {
      method,
      headers,
      credentials: "same-origin",
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiRefusal(0, "NETWORK", "");
  }
  const json = (await res.json().catch(() => null)) as
    { success: true; data: T } | { success: false; error: { code: string; message: string; details?: Record<string, unknown> } } | null;
  if (!json) throw new ApiRefusal(res.status, "INTERNAL_ERROR", `HTTP ${res.status}`);
  if (!json.success) throw new ApiRefusal(res.status, json.error.code, json.error.message, json.error.details ?? {});
  return json.data;
}
