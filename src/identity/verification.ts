import { and, eq, isNotNull, lte } from "drizzle-orm";
import { verificationTokens, verifiedDomains } from "../db/schema";
import { hostNameRefusal, normalizeHost } from "../domain/public-hosts";
import { validationError } from "../http/errors";
import { randomString } from "../lib/ids";
import { DAY, HOUR, iso, isoOrNull } from "../lib/time";
import { ApiError } from "../http/errors";
import { resolve, txtText } from "../providers/doh";
import { OutboundFailure, OutboundRefusal, ResolverUnavailable, safeFetch } from "../providers/safe-fetch";
import type { Deps } from "../http/deps";

export const VERIFICATION_METHODS = ["dns", "file", "meta"] as const;
export type VerificationMethod = (typeof VERIFICATION_METHODS)[number];
export type VerifiedDomainRow = typeof verifiedDomains.$inferSelect;

/** The name of the TXT sub-record, the file and the meta tag. */
export const PROOF_NAME = "service-verification";
/** A verified domain is checked again daily; one that could not be checked, hourly. */
export const RECHECK_VERIFIED_MS = DAY;
export const RECHECK_PENDING_MS = HOUR;
/** A domain still pending (never checked conclusively) after 3 days is failed. */
export const PENDING_GIVE_UP_MS = 3 * DAY;

export function domainRecord(d: VerifiedDomainRow) {
  return {
    domain: d.domain,
    status: d.status,
    method: d.method,
    verifiedAt: isoOrNull(d.verifiedAt),
    lastCheckedAt: isoOrNull(d.lastCheckedAt),
    failureReason: d.failureReason,
  };
}

/** A new token replaces the previous one: proofs carrying the old one no longer count. */
export async function generateToken({ db }: Deps, organizationId: string, at: number): Promise<{ token: string; createdAt: number }> {
  const token = randomString(32);
  await db
    .insert(verificationTokens)
    .values({ organizationId, token, createdAt: at })
    .onConflictDoUpdate({ target: verificationTokens.organizationId, set: { token, createdAt: at } })
    .run();
  return { token, createdAt: at };
}

export function proofInstructions(domain: string | null, token: string) {
  const host = domain ?? "<your-domain>";
  return {
    dns: { type: "TXT" as const, names: [host, `_${PROOF_NAME}.${host}`], value: `${PROOF_NAME}=${token}` },
    file: { url: `https://${host}/${PROOF_NAME}.html`, content: `${PROOF_NAME}=${token}` },
    meta: { url: `https://${host}/`, tag: `<meta name="${PROOF_NAME}" content="${token}">` },
  };
}

/** The outcome of one look for the proof: found, absent (failed), or not conclusive (pending). */
type Check = { result: "found" } | { result: "absent"; reason: string } | { result: "unknown"; reason: string };

async function checkDns({ env }: Deps, domain: string, token: string): Promise<Check> {
  const expected = `${PROOF_NAME}=${token}`;
  const answers = await Promise.all([domain, `_${PROOF_NAME}.${domain}`].map((name) => resolve(env.DOH_RESOLVER_URL, name, "TXT")));
  for (const a of answers) if (a.status === "ok" && a.records.some((r) => txtText(r).trim() === expected)) return { result: "found" };
  const error = answers.find((a) => a.status === "error");
  if (error && error.status === "error") return { result: "unknown", reason: error.reason };
  return { result: "absent", reason: `no TXT record "${expected}" on ${domain} or _${PROOF_NAME}.${domain}` };
}

async function fetchPage({ env }: Deps, url: string): Promise<{ ok: true; body: string } | { ok: false; check: Check }> {
  try {
    const res = await safeFetch(env, url, { followRedirects: true, readBody: true });
    if (res.status >= 500) return { ok: false, check: { result: "unknown", reason: `${url} answered HTTP ${res.status}` } };
    if (res.status < 200 || res.status >= 300)
      return { ok: false, check: { result: "absent", reason: `${url} answered HTTP ${res.status}` } };
    return { ok: true, body: res.body ?? "" };
  } catch (err) {
    if (err instanceof ResolverUnavailable) return { ok: false, check: { result: "unknown", reason: `${url}: ${err.reason}` } };
    if (err instanceof OutboundFailure) return { ok: false, check: { result: "absent", reason: `${url}: ${err.reason}` } };
    throw err;
  }
}

async function checkFile(deps: Deps, domain: string, token: string): Promise<Check> {
  const url = `https://${domain}/${PROOF_NAME}.html`;
  const page = await fetchPage(deps, url);
  if (!page.ok) return page.check;
  const found = new RegExp(`(^|[^A-Za-z0-9_-])${PROOF_NAME}=${token}($|[^A-Za-z0-9])`).test(page.body);
  return found ? { result: "found" } : { result: "absent", reason: `${url} does not contain ${PROOF_NAME}=${token}` };
}

async function checkMeta(deps: Deps, domain: string, token: string): Promise<Check> {
  const url = `https://${domain}/`;
  const page = await fetchPage(deps, url);
  if (!page.ok) return page.check;
  let found = false;
  await new HTMLRewriter()
    .on("head meta", {
      element(el) {
        if (el.getAttribute("name")?.trim().toLowerCase() === PROOF_NAME && el.getAttribute("content")?.trim() === token) found = true;
      },
    })
    .transform(new Response(page.body, { headers: { "Content-Type": "text/html; charset=utf-8" } }))
    .arrayBuffer();
  return found
    ? { result: "found" }
    : { result: "absent", reason: `no <meta name="${PROOF_NAME}" content="${token}"> in the head of ${url}` };
}

const CHECKS: Record<VerificationMethod, (deps: Deps, domain: string, token: string) => Promise<Check>> = {
  dns: checkDns,
  file: checkFile,
  meta: checkMeta,
};

/** A domain as the verify route takes it: a public DNS name, refused before any network call. */
export function verifiableDomain(raw: string): string {
  const domain = normalizeHost(raw);
  const refusal = hostNameRefusal(domain);
  if (refusal) throw validationError("domain", refusal);
  return domain;
}

async function currentToken({ db }: Deps, organizationId: string): Promise<string | null> {
  const row = await db.select().from(verificationTokens).where(eq(verificationTokens.organizationId, organizationId)).get();
  return row?.token ?? null;
}

/** Looks for the proof now; a destination the outbound guard refuses is a 400 on `domain`. */
async function lookForProof(deps: Deps, domain: string, method: VerificationMethod, token: string | null): Promise<Check> {
  if (!token) return { result: "absent", reason: "the organization has no verification token (generate one first)" };
  try {
    return await CHECKS[method](deps, domain, token);
  } catch (err) {
    if (err instanceof OutboundRefusal) throw validationError("domain", err.reason);
    throw err;
  }
}

function nextState(previous: VerifiedDomainRow | undefined, check: Check, at: number) {
  if (check.result === "found") {
    return {
      status: "verified" as const,
      verifiedAt: previous?.status === "verified" ? previous.verifiedAt : at,
      failureReason: null,
      nextCheckAt: at + RECHECK_VERIFIED_MS,
    };
  }
  if (check.result === "unknown") {
    // Not conclusive (resolver down, site 5xx): a verified domain keeps its status until a
    // conclusive check; a new one waits as pending for at most 3 days.
    const since = previous?.createdAt ?? at;
    if (previous?.status !== "verified" && at - since >= PENDING_GIVE_UP_MS) {
      return { status: "failed" as const, verifiedAt: null, failureReason: check.reason, nextCheckAt: null };
    }
    return {
      status: previous?.status === "verified" ? ("verified" as const) : ("pending" as const),
      verifiedAt: previous?.status === "verified" ? previous.verifiedAt : null,
      failureReason: check.reason,
      nextCheckAt: at + RECHECK_PENDING_MS,
    };
  }
  return { status: "failed" as const, verifiedAt: null, failureReason: check.reason, nextCheckAt: null };
}

export async function verifyDomain(
  deps: Deps,
  organizationId: string,
  rawDomain: string,
  method: VerificationMethod,
  at: number,
): Promise<VerifiedDomainRow> {
  const { db } = deps;
  const domain = verifiableDomain(rawDomain);
  const [token, previous] = await Promise.all([
    currentToken(deps, organizationId),
    db
      .select()
      .from(verifiedDomains)
      .where(and(eq(verifiedDomains.organizationId, organizationId), eq(verifiedDomains.domain, domain)))
      .get(),
  ]);
  const check = await lookForProof(deps, domain, method, token);
  // A new method starts a new attempt: its pending time counts from now.
  const base = previous && previous.method === method ? previous : undefined;
  const state = nextState(base, check, at);
  const row: VerifiedDomainRow = {
    organizationId,
    domain,
    method,
    ...state,
    lastCheckedAt: at,
    createdAt: base?.createdAt ?? at,
    updatedAt: at,
  };
  await db
    .insert(verifiedDomains)
    .values(row)
    .onConflictDoUpdate({
      target: [verifiedDomains.organizationId, verifiedDomains.domain],
      set: { ...row, organizationId: undefined, domain: undefined },
    })
    .run();
  return row;
}

export async function listDomains({ db }: Deps, organizationId: string): Promise<VerifiedDomainRow[]> {
  return db.select().from(verifiedDomains).where(eq(verifiedDomains.organizationId, organizationId)).orderBy(verifiedDomains.domain).all();
}

export async function verificationStatus(deps: Deps, organizationId: string) {
  const { db } = deps;
  const [token, domains] = await Promise.all([
    db.select().from(verificationTokens).where(eq(verificationTokens.organizationId, organizationId)).get(),
    listDomains(deps, organizationId),
  ]);
  return {
    tokenGeneratedAt: isoOrNull(token?.createdAt),
    verified: domains.some((d) => d.status === "verified"),
    domains: domains.map(domainRecord),
  };
}

/** Domains re-checked per cron run at most; the rest wait for the next minute. */
const RECHECK_LIMIT = 20;

/**
 * The cron's re-check: every domain whose next check is due looks for its proof again, with
 * the organization's current token. A verified domain whose proof is gone drops to failed.
 */
export async function recheckDomains(deps: Deps, at: number): Promise<{ checked: number; dropped: number }> {
  const { db } = deps;
  const due = await db
    .select({ organizationId: verifiedDomains.organizationId, domain: verifiedDomains.domain })
    .from(verifiedDomains)
    .where(and(isNotNull(verifiedDomains.nextCheckAt), lte(verifiedDomains.nextCheckAt, at)))
    .orderBy(verifiedDomains.nextCheckAt)
    .limit(RECHECK_LIMIT)
    .all();
  let dropped = 0;
  for (const d of due) {
    const where = and(eq(verifiedDomains.organizationId, d.organizationId), eq(verifiedDomains.domain, d.domain));
    const previous = await db.select().from(verifiedDomains).where(where).get();
    if (!previous) continue;
    let check: Check;
    try {
      check = await lookForProof(deps, d.domain, previous.method, await currentToken(deps, d.organizationId));
    } catch (err) {
      // The destination is now refused by the guard (e.g. it resolves to a private address).
      if (!(err instanceof ApiError)) throw err;
      check = { result: "absent", reason: String(err.details.reason ?? err.message) };
    }
    const state = nextState(previous, check, at);
    if (previous.status === "verified" && state.status === "failed") dropped += 1;
    await db
      .update(verifiedDomains)
      .set({ ...state, lastCheckedAt: at, updatedAt: at })
      .where(where)
      .run();
  }
  return { checked: due.length, dropped };
}
