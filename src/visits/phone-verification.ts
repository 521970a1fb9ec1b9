import type { Delivery } from "../domain/deliveries";
import { pickLanguage, render } from "../domain/notification-templates";
import {
  deadReason,
  newPhoneCode,
  PHONE_CODE_MAX_ATTEMPTS,
  PHONE_CODE_MESSAGE,
  PHONE_CODE_TTL_MS,
  statusOf,
  type PhoneVerificationStatus,
} from "../domain/phone-codes";
import { and, eq, gt, inArray, isNull, lt, sql } from "drizzle-orm";
import { notificationDeliveries, organizations, phoneVerifications } from "../db/schema";
import { ApiError, validationError } from "../http/errors";
import { MAC_HEX_LENGTH, signCredential, verifyCredential } from "../lib/credentials";
import { DAY, iso, utcDayStart } from "../lib/time";
import { deliver, deliveryKey } from "../notifications/notification-delivery";
import { barePhone, isOptedOut } from "../notifications/opt-outs";
import { businessText } from "../notifications/message-templates";
import type { OrganizationSmsPolicy } from "../notifications/sms-guard";
import { type Deps } from "../http/deps";

// A visitor's number proven by a one-time code (docs/limits.md, "SMS and messaging caps"). At a
// join that gives a phone, an organization with `requirePhoneCode` texts a 6-digit code, through
// the ordinary delivery step and its gates (country, per-ticket cap, ceiling, allowance); the SMS
// gate (./sms-guard.ts) texts that ticket nothing more until the code is given back here. Only an
// HMAC of the code is kept (keyed with TOKEN_SECRET, so a copy of the table gives no code), for
// 10 minutes and at most 5 wrong tries; every change is one conditional UPDATE, exact under
// concurrent guesses.

/** What a join's answer and the verification routes say of the ticket's number. */
export interface PhoneVerificationView {
  status: PhoneVerificationStatus;
  /** When the code sent last stops working; null when there is none to give back. */
  expiresAt: string | null;
}

export const NO_PHONE_VERIFICATION: PhoneVerificationView = { status: "none", expiresAt: null };

/** The ticket a code is about, as the caller knows it. */
export interface CodeTicket {
  id: string;
  organizationId: string;
  displayCode: string;
  queueName: string;
  /** The queue whose own text of the code message wins (docs/message-templates.md). */
  queueId?: string;
}

type Row = Pick<
  typeof phoneVerifications.$inferSelect,
  "phone" | "language" | "codeHash" | "expiresAt" | "failedAttempts" | "codesSent" | "verifiedAt"
>;

const stateOf = (r: Row) => ({ expiresAt: r.expiresAt, failedAttempts: r.failedAttempts, verifiedAt: r.verifiedAt });

function viewOf(row: Row | null, at: number): PhoneVerificationView {
  const status = statusOf(row ? stateOf(row) : null, at);
  return { status, expiresAt: row && status === "pending" ? iso(row.expiresAt) : null };
}

/** The MAC of a ticket's code: the ticket id is in it, so one code's MAC says nothing of another ticket's. */
async function codeHash({ env }: Deps, ticketId: string, code: string): Promise<string> {
  return (await signCredential(env, `phone-code:${ticketId}:${code}`)).slice(-MAC_HEX_LENGTH);
}

/** Constant time, under the current or the previous TOKEN_SECRET (a rotation does not void pending codes). */
function codeMatches({ env }: Deps, ticketId: string, code: string, hash: string): Promise<boolean> {
  return verifyCredential(env, `phone-code:${ticketId}:${code}${hash}`);
}

async function readRow({ db }: Deps, ticketId: string): Promise<Row | null> {
  const p = phoneVerifications;
  const row = await db
    .select({
      phone: p.phone,
      language: p.language,
      codeHash: p.codeHash,
      expiresAt: p.expiresAt,
      failedAttempts: p.failedAttempts,
      codesSent: p.codesSent,
      verifiedAt: p.verifiedAt,
    })
    .from(p)
    .where(eq(p.ticketId, ticketId))
    .get();
  return row ?? null;
}

/**
 * Texts `code` through the delivery step (the SMS gate lets a code message through as a number's
 * first). Answers why it was refused (policy or allowance), or null when it went to the provider
 * (or will, on a passing failure). Once the provider has had it, the delivery row keeps the
 * message without the code.
 */
async function textCode(deps: Deps, ticket: CodeTicket, row: Pick<Row, "phone" | "language">, code: string, sendNo: number, at: number) {
  const { db } = deps;
  const org = await db
    .select({ defaultLanguage: organizations.defaultLanguage })
    .from(organizations)
    .where(eq(organizations.id, ticket.organizationId))
    .get();
  const language = pickLanguage(row.language, org?.defaultLanguage);
  const own = await businessText(deps, ticket.organizationId, ticket.queueId ?? null, PHONE_CODE_MESSAGE, language);
  const text = render(PHONE_CODE_MESSAGE, language, { otp: code, code: ticket.displayCode, queue: ticket.queueName }, own);
  const delivery: Delivery = {
    eventId: `phone_code:${ticket.id}:${sendNo}`,
    organizationId: ticket.organizationId,
    type: PHONE_CODE_MESSAGE,
    channel: "sms",
    target: { kind: "phone", phone: row.phone },
    ...text,
    data: { type: PHONE_CODE_MESSAGE, ticketId: ticket.id, displayCode: ticket.displayCode },
  };
  await deliver(deps, [delivery], at);
  const redacted = JSON.stringify({
    target: delivery.target,
    title: text.title,
    body: text.body.replace(code, "••••••"),
    data: delivery.data,
  });
  const [outcome] = await db
    .update(notificationDeliveries)
    .set({ payload: redacted })
    .where(and(eq(notificationDeliveries.key, deliveryKey(delivery)), inArray(notificationDeliveries.status, ["sent", "failed"])))
    .returning({
      status: notificationDeliveries.status,
      provider: notificationDeliveries.provider,
      providerResponse: notificationDeliveries.providerResponse,
    });
  const refused = outcome?.status === "failed" && (outcome.provider === "policy" || outcome.provider === "quota");
  return refused ? (outcome.providerResponse ?? "SMS_REFUSED") : null;
}

/**
 * After a join that gave `phone` (admitted by admitVisitorPhone, whose policy this is): with
 * `requirePhoneCode`, the ticket's code is stored and texted, and the answer is `pending`.
 * Without the setting, on a plan without SMS, or for a number that sent STOP: `none`.
 */
export async function startPhoneVerification(
  deps: Deps,
  ticket: CodeTicket,
  phone: string,
  language: string | null,
  admitted: OrganizationSmsPolicy,
  at: number,
): Promise<PhoneVerificationView> {
  const { db } = deps;
  if (!admitted.policy.requirePhoneCode || admitted.smsPerMonth === 0) return NO_PHONE_VERIFICATION;
  const bare = barePhone(phone);
  if (await isOptedOut(deps, ticket.organizationId, bare)) return NO_PHONE_VERIFICATION;
  const code = newPhoneCode();
  const expiresAt = at + PHONE_CODE_TTL_MS;
  // Stored before it is sent: the visitor may type it back as soon as it arrives.
  await db
    .insert(phoneVerifications)
    .values({
      ticketId: ticket.id,
      organizationId: ticket.organizationId,
      phone: bare,
      language,
      codeHash: await codeHash(deps, ticket.id, code),
      expiresAt,
      failedAttempts: 0,
      codesSent: 1,
      verifiedAt: null,
      createdAt: at,
      updatedAt: at,
    })
    .onConflictDoNothing({ target: phoneVerifications.ticketId });
  await textCode(deps, ticket, { phone: bare, language }, code, 1, at);
  return { status: "pending", expiresAt: iso(expiresAt) };
}

/**
 * A clerk's walk-in (operator-join, vip-ticket) with a phone, under `requirePhoneCode`: staff vouch
 * for the person in front of them, who could not type a code into the clerk's console. No code is
 * texted; the ticket's number is recorded as verified at once, so its join's and later messages go
 * out (docs/limits.md). Without the setting, on a plan without SMS, or for a number that sent STOP:
 * `none`, as for any join.
 */
export async function vouchForPhone(
  deps: Deps,
  ticket: CodeTicket,
  phone: string,
  language: string | null,
  admitted: OrganizationSmsPolicy,
  at: number,
): Promise<PhoneVerificationView> {
  const { db } = deps;
  if (!admitted.policy.requirePhoneCode || admitted.smsPerMonth === 0) return NO_PHONE_VERIFICATION;
  const bare = barePhone(phone);
  if (await isOptedOut(deps, ticket.organizationId, bare)) return NO_PHONE_VERIFICATION;
  // No code exists: the stored MAC is of a fresh random code nobody is told, and none was sent.
  await db
    .insert(phoneVerifications)
    .values({
      ticketId: ticket.id,
      organizationId: ticket.organizationId,
      phone: bare,
      language,
      codeHash: await codeHash(deps, ticket.id, newPhoneCode()),
      expiresAt: at,
      failedAttempts: 0,
      codesSent: 0,
      verifiedAt: at,
      createdAt: at,
      updatedAt: at,
    })
    .onConflictDoNothing({ target: phoneVerifications.ticketId });
  return { status: "verified", expiresAt: null };
}

/** The verification of a ticket, for its holder's page; `none` when it has none. */
export async function phoneVerificationOf(deps: Deps, ticketId: string, at: number): Promise<PhoneVerificationView> {
  return viewOf(await readRow(deps, ticketId), at);
}

function nothingToVerify(): ApiError {
  return new ApiError(
    "INVALID_STATE",
    "This ticket has no code to give back: its join gave no phone, or the organization does not ask for a code",
    { status: "none", allowed: ["pending"] },
  );
}

function deadCode(reason: "too_many_attempts" | "expired"): ApiError {
  const why = reason === "expired" ? "This code has expired" : `This code is dead after ${PHONE_CODE_MAX_ATTEMPTS} wrong tries`;
  return new ApiError("INVALID_STATE", `${why}: ask for a new one (POST /v1/tickets/{ticketId}/phone-verification/resend)`, {
    status: "expired",
    allowed: ["pending"],
    reason,
  });
}

/**
 * The visitor gives the code back: `verified` (also when it already was); 400 naming `code` with
 * `attemptsLeft` for a wrong code; 409 INVALID_STATE for a dead or expired code, or none at all.
 */
export async function verifyPhoneCode(deps: Deps, ticketId: string, code: string, at: number): Promise<PhoneVerificationView> {
  const { db } = deps;
  const row = await readRow(deps, ticketId);
  if (!row) throw nothingToVerify();
  if (row.verifiedAt !== null) return viewOf(row, at);
  const dead = deadReason(stateOf(row), at);
  if (dead) throw deadCode(dead);
  const p = phoneVerifications;
  const unverified = and(
    eq(p.ticketId, ticketId),
    eq(p.codeHash, row.codeHash),
    isNull(p.verifiedAt),
    lt(p.failedAttempts, PHONE_CODE_MAX_ATTEMPTS),
  );
  if (await codeMatches(deps, ticketId, code, row.codeHash)) {
    // Only while the code read is still the ticket's, alive, and not killed by concurrent wrong tries.
    const [done] = await db
      .update(p)
      .set({ verifiedAt: at, updatedAt: at })
      .where(and(unverified, gt(p.expiresAt, at)))
      .returning({ verifiedAt: p.verifiedAt });
    if (done) return { status: "verified", expiresAt: null };
    return answerAfterRace(deps, ticketId, at);
  }
  const [failed] = await db
    .update(p)
    .set({ failedAttempts: sql`${p.failedAttempts} + 1`, updatedAt: at })
    .where(unverified)
    .returning({ failedAttempts: p.failedAttempts });
  if (!failed) return answerAfterRace(deps, ticketId, at);
  const attemptsLeft = PHONE_CODE_MAX_ATTEMPTS - failed.failedAttempts;
  throw validationError(
    "code",
    attemptsLeft > 0
      ? "this is not the code that was sent"
      : "this is not the code that was sent, and it was the last try: ask for a new code",
    { attemptsLeft },
  );
}

/** The row changed between the read and the write (a concurrent try or resend): answer by what it is now. */
async function answerAfterRace(deps: Deps, ticketId: string, at: number): Promise<PhoneVerificationView> {
  const now = await readRow(deps, ticketId);
  if (!now) throw nothingToVerify();
  if (now.verifiedAt !== null) return viewOf(now, at);
  throw deadCode(deadReason(stateOf(now), at) ?? "too_many_attempts");
}

/**
 * A new code, texted like the first: it counts against the per-ticket cap, the day's ceiling and
 * the allowance (429 when refused, the previous code left as it was). Already verified: nothing sent.
 */
export async function resendPhoneCode(deps: Deps, ticket: CodeTicket, at: number): Promise<PhoneVerificationView> {
  const { db } = deps;
  // The send's number is taken first: concurrent resends are distinct messages, and only the last one's code is kept.
  const p = phoneVerifications;
  const [taken] = await db
    .update(p)
    .set({ codesSent: sql`${p.codesSent} + 1`, updatedAt: at })
    .where(and(eq(p.ticketId, ticket.id), isNull(p.verifiedAt)))
    .returning({ phone: p.phone, language: p.language, codesSent: p.codesSent });
  if (!taken) {
    const row = await readRow(deps, ticket.id);
    if (!row) throw nothingToVerify();
    return viewOf(row, at);
  }
  const code = newPhoneCode();
  const refused = await textCode(deps, ticket, taken, code, taken.codesSent, at);
  if (refused) {
    const reset = utcDayStart(at) + DAY;
    const retryAfter = Math.max(1, Math.ceil((reset - at) / 1000));
    throw new ApiError(
      "API_RATE_LIMIT_EXCEEDED",
      "No new code can be texted to this ticket's number now: the organization's SMS limits refuse it",
      { field: "phone", reason: refused, retryAfter, window: "sms" },
      { "Retry-After": String(retryAfter) },
    );
  }
  const expiresAt = at + PHONE_CODE_TTL_MS;
  await db
    .update(p)
    .set({ codeHash: await codeHash(deps, ticket.id, code), expiresAt, failedAttempts: 0, updatedAt: at })
    .where(and(eq(p.ticketId, ticket.id), eq(p.codesSent, taken.codesSent), isNull(p.verifiedAt)));
  return { status: "pending", expiresAt: iso(expiresAt) };
}
