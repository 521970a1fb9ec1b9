import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import { changedFields, type AuditChanges, type AuditOrigin } from "../domain/audit";
import { database } from "../db/client";
import { defaultOrganizationOf } from "../http/credentials/memberships";
import type { AppEnv } from "../http/context";
import { clientIp } from "../http/rate-limit";
import { OPERATIONS } from "../http/operations";
import { isId } from "../lib/ids";
import { now } from "../lib/clock";
import { recordAudit } from "./audit";
import { AUDITED, type AuditedOperation } from "./audited-operations";
import { deps } from "../http/deps";

// One entry for every change (issue 40, docs/security.md). Routes that record their own entry in
// the batch of the change (with the fields before and after) mark the request through
// `auditOrigin` (src/http/audit-origin.ts), and this recorder leaves them alone; for every other
// operation of ./audited-operations.ts, it records the entry once the change answered 2xx:
// who (the session's user or the key), what (the action), on what (the target's id), from where.

interface Matcher {
  method: string;
  pattern: RegExp;
  names: string[];
  audited: AuditedOperation;
}

const MATCHERS: Matcher[] = Object.entries(OPERATIONS).flatMap(([key, { id }]) => {
  const audited = AUDITED[id];
  if (!audited) return [];
  // Every key is "METHOD /path".
  const [method = "", path = ""] = key.split(" ");
  const names: string[] = [];
  const source = path.replace(/[.]/g, "\\.").replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return "([^/]+)";
  });
  return [{ method, pattern: new RegExp(`^${source}$`), names, audited }];
});

function matchOperation(method: string, path: string): { audited: AuditedOperation; params: Record<string, string> } | null {
  for (const m of MATCHERS) {
    if (m.method !== method) continue;
    const found = m.pattern.exec(path);
    if (!found) continue;
    const params: Record<string, string> = {};
    m.names.forEach((name, i) => (params[name] = decodeURIComponent(found[i + 1]!)));
    return { audited: m.audited, params };
  }
  return null;
}

async function answerData(c: Context<AppEnv>): Promise<Record<string, unknown> | null> {
  if (!c.res.headers.get("content-type")?.includes("application/json")) return null;
  try {
    const body = (await c.res.clone().json()) as { data?: unknown };
    return body.data && typeof body.data === "object" ? (body.data as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Fields every record has that say nothing about the change. */
const BOOKKEEPING = new Set(["id", "organizationId", "createdAt", "updatedAt", "livemode", "object"]);
/** A value longer than this (as JSON) is recorded by its size only: the log is not a copy of the data. */
const LONGEST_VALUE = 1000;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function fieldsOf(record: Record<string, unknown>): string[] {
  return Object.keys(record).filter((k) => !BOOKKEEPING.has(k));
}

function bounded(changes: AuditChanges): AuditChanges {
  const cut = (v: unknown) => {
    const text = JSON.stringify(v ?? null);
    return text.length > LONGEST_VALUE ? `[${text.length} characters]` : v;
  };
  return Object.fromEntries(Object.entries(changes).map(([k, { before, after }]) => [k, { before: cut(before), after: cut(after) }]));
}

async function requestBody(c: Context<AppEnv>): Promise<Record<string, unknown> | null> {
  if (!c.req.header("content-type")?.includes("application/json")) return null;
  try {
    // The validator parsed it already: Hono answers its cached copy.
    const body: unknown = await c.req.json();
    return isRecord(body) ? body : null;
  } catch {
    return null;
  }
}

/**
 * What the change did, for an operation whose route does not record its own entry: a creation's
 * fields as answered (before null), a deletion's fields as the guard loaded them (after null),
 * and for any other change the fields the body named: with a guarded row, before from it and
 * after from the answer; without one (e.g. an organization's SMS policy, a plan change), before
 * null and after as the body asked. Secrets and personal data are redacted (domain/audit.ts changedFields).
 */
async function changesOf(c: Context<AppEnv>, audited: AuditedOperation, data: Record<string, unknown> | null): Promise<AuditChanges> {
  const row = c.get("guarded")?.row as Record<string, unknown> | undefined;
  const before = row && isRecord(row) && Object.keys(row).length > 1 ? row : null;
  if (c.req.method === "DELETE") return before ? bounded(changedFields(before, null, fieldsOf(before))) : {};
  if (c.req.method === "POST" && audited.target === "answer") return data ? bounded(changedFields(null, data, fieldsOf(data))) : {};
  const body = await requestBody(c);
  if (!body) return {};
  const fields = fieldsOf(body);
  // With the row before, the answer says what the field became; without it (no guarded row), what
  // was asked is recorded: an upgrade answers the plan still in force until the payment is confirmed.
  const after = Object.fromEntries(fields.map((k) => [k, before && data && k in data ? data[k] : body[k]]));
  return bounded(changedFields(before, after, fields));
}

const orgIdIn = (value: unknown): string | null => (typeof value === "string" && isId("org", value) ? value : null);

/** The organization whose log holds the entry: the path's, the guarded resource's, the answer's, else the request's. */
async function organizationOf(
  c: Context<AppEnv>,
  params: Record<string, string>,
  data: Record<string, unknown> | null,
): Promise<string | null> {
  const fromPath = orgIdIn(params.organizationId);
  if (fromPath) return fromPath;
  const guarded = c.get("guarded");
  if (guarded?.organizationId) return guarded.organizationId;
  const fromAnswer = orgIdIn(data?.organizationId) ?? orgIdIn((data?.organization as { id?: unknown } | undefined)?.id);
  if (fromAnswer) return fromAnswer;
  const principal = c.get("principal");
  if (principal?.kind === "apiKey") return principal.organizationId;
  if (principal?.kind !== "session") return null;
  const header = orgIdIn(c.req.header("X-Organization-Id"));
  if (header) return header;
  return (await defaultOrganizationOf(database(c.env.DB), principal.user.id)).organizationId;
}

function originOf(c: Context<AppEnv>): AuditOrigin | null {
  const principal = c.get("principal");
  const actor =
    principal?.kind === "session"
      ? { type: "user" as const, id: principal.user.id }
      : principal?.kind === "apiKey"
        ? { type: "api_key" as const, id: principal.keyId }
        : null;
  if (!actor) return null;
  const ip = clientIp(c);
  return { actor, ip: ip === "unknown" ? null : ip, requestId: c.get("requestId") ?? null };
}

export const recordEveryChange = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.res.status < 200 || c.res.status >= 300 || c.get("auditWritten")) return;
  const matched = matchOperation(c.req.method, c.req.path);
  if (!matched) return;
  const origin = originOf(c);
  if (!origin) return;
  try {
    const { audited, params } = matched;
    const data = await answerData(c);
    const organizationId = await organizationOf(c, params, audited.action === "organization.created" ? { organizationId: data?.id } : data);
    if (!organizationId) return;
    const target = audited.target;
    const entityId =
      target === "organization"
        ? organizationId
        : target === "actor"
          ? (origin.actor.id ?? organizationId)
          : target === "answer"
            ? typeof data?.id === "string"
              ? data.id
              : organizationId
            : (params[target.param] ?? organizationId);
    const changes = await changesOf(c, audited, data);
    await recordAudit(
      deps(c),
      origin,
      { organizationId, entityType: audited.entityType, entityId, action: audited.action, changes },
      now(),
    );
    c.set("auditWritten", true);
  } catch (err) {
    // The change is made and answered; a lost entry is logged loudly rather than failing the answer.
    console.error(JSON.stringify({ auditRecording: String(err), requestId: c.get("requestId") }));
  }
});
