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
import type { Env } from "../env";
import { ApiError, validationError } from "../http/errors";
import { MAC_HEX_LENGTH, signCredential, verifyCredential } from "../lib/credentials";
import { DAY, iso, utcDayStart } from "../lib/time";
import { deliver, deliveryKey } from "../notifications/notification-delivery";
import { barePhone, isOptedOut } from "../notifications/opt-outs";
import { businessText } from "../notifications/message-templates";
import type { OrganizationSmsPolicy } from "../notifications/sms-guard";

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

interface Row {
  phone: string;
  language: string | null;
  code_hash: string;
  expires_at: number;
  failed_attempts: number;
  codes_sent: number;
  verified_at: number | null;
}

const stateOf = (r: Row) => ({ expiresAt: r.expires_at, failedAttempts: r.failed_attempts, verifiedAt: r.verified_at });

function viewOf(row: Row | null, at: number): PhoneVerificationView {
  const status = statusOf(row ? stateOf(row) : null, at);
  return { status, expiresAt: row && status === "pending" ? iso(row.expires_at) : null };
}

/** The MAC of a ticket's code: the ticket id is in it, so one code's MAC says nothing of another ticket's. */
async function codeHash(env: Env, ticketId: string, code: string): Promise<string> {
  return (await signCredential(env, `phone-code:${ticketId}:${code}`)).slice(-MAC_HEX_LENGTH);
}

/** Constant time, under the current or the previous TOKEN_SECRET (a rotation does not void pending codes). */
function codeMatches(env: Env, ticketId: string, code: string, hash: string): Promise<boolean> {
  return verifyCredential(env, `phone-code:${ticketId}:${code}${hash}`);
}

function readRow(env: Env, ticketId: string): Promise<Row | null> {
  return env.DB.prepare(
    `SELECT phone, language, code_hash, expires_at, failed_attempts, codes_sent, verified_at FROM phone_verifications
     WHERE ticket_id = ?`,
  )
    .bind(ticketId)
    .first<Row>();
}

/**
 * Texts `code` through the delivery step (the SMS gate lets a code message through as a number's
 * first). Answers why it was refused (policy or allowance), or null when it went to the provider
 * (or will, on a passing failure). Once the provider has had it, the delivery row keeps the
 * message without the code.
 */
async function textCode(env: Env, ticket: CodeTicket, row: Pick<Row, "phone" | "language">, code: string, sendNo: number, at: number) {
  const org = await env.DB.prepare("SELECT default_language FROM organizations WHERE id = ?")
    .bind(ticket.organizationId)
    .first<{ default_language: string }>();
  const language = pickLanguage(row.language, org?.default_language);
  const own = await businessText(env, ticket.organizationId, ticket.queueId ?? null, PHONE_CODE_MESSAGE, language);
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
  await deliver(env, [delivery], at);
  const redacted = JSON.stringify({
    target: delivery.target,
    title: text.title,
    body: text.body.replace(code, "••••••"),
    data: delivery.data,
  });
  const outcome = await env.DB.prepare(
    `UPDATE notification_deliveries SET payload = ? WHERE key = ? AND status IN ('sent', 'failed')
     RETURNING status, provider, provider_response`,
  )
    .bind(redacted, deliveryKey(delivery))
    .first<{ status: string; provider: string | null; provider_response: string | null }>();
  const refused = outcome?.status === "failed" && (outcome.provider === "policy" || outcome.provider === "quota");
  return refused ? (outcome.provider_response ?? "SMS_REFUSED") : null;
}

/**
 * After a join that gave `phone` (admitted by admitVisitorPhone, whose policy this is): with
 * `requirePhoneCode`, the ticket's code is stored and texted, and the answer is `pending`.
 * Without the setting, on a plan without SMS, or for a number that sent STOP: `none`.
 */
export async function startPhoneVerification(
  env: Env,
  ticket: CodeTicket,
  phone: string,
  language: string | null,
  admitted: OrganizationSmsPolicy,
  at: number,
): Promise<PhoneVerificationView> {
  if (!admitted.policy.requirePhoneCode || admitted.smsPerMonth === 0) return NO_PHONE_VERIFICATION;
  const bare = barePhone(phone);
  if (await isOptedOut(env, ticket.organizationId, bare)) return NO_PHONE_VERIFICATION;
  const code = newPhoneCode();
  const expiresAt = at + PHONE_CODE_TTL_MS;
  // Stored before it is sent: the visitor may type it back as soon as it arrives.
  await env.DB.prepare(
    `INSERT INTO phone_verifications (ticket_id, organization_id, phone, language, code_hash, expires_at, failed_attempts, codes_sent,
     verified_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, 1, NULL, ?, ?) ON CONFLICT (ticket_id) DO NOTHING`,
  )
    .bind(ticket.id, ticket.organizationId, bare, language, await codeHash(env, ticket.id, code), expiresAt, at, at)
    .run();
  await textCode(env, ticket, { phone: bare, language }, code, 1, at);
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
  env: Env,
  ticket: CodeTicket,
  phone: string,
  language: string | null,
  admitted: OrganizationSmsPolicy,
  at: number,
): Promise<PhoneVerificationView> {
  if (!admitted.policy.requirePhoneCode || admitted.smsPerMonth === 0) return NO_PHONE_VERIFICATION;
  const bare = barePhone(phone);
  if (await isOptedOut(env, ticket.organizationId, bare)) return NO_PHONE_VERIFICATION;
  // No code exists: the stored MAC is of a fresh random code nobody is told, and none was sent.
  await env.DB.prepare(
    `INSERT INTO phone_verifications (ticket_id, organization_id, phone, language, code_hash, expires_at, failed_attempts, codes_sent,
     verified_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?) ON CONFLICT (ticket_id) DO NOTHING`,
  )
    .bind(ticket.id, ticket.organizationId, bare, language, await codeHash(env, ticket.id, newPhoneCode()), at, at, at, at)
    .run();
  return { status: "verified", expiresAt: null };
}

/** The verification of a ticket, for its holder's page; `none` when it has none. */
export async function phoneVerificationOf(env: Env, ticketId: string, at: number): Promise<PhoneVerificationView> {
  return viewOf(await readRow(env, ticketId), at);
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
export async function verifyPhoneCode(env: Env, ticketId: string, code: string, at: number): Promise<PhoneVerificationView> {
  const row = await readRow(env, ticketId);
  if (!row) throw nothingToVerify();
  if (row.verified_at !== null) return viewOf(row, at);
  const dead = deadReason(stateOf(row), at);
  if (dead) throw deadCode(dead);
  if (await codeMatches(env, ticketId, code, row.code_hash)) {
    // Only while the code read is still the ticket's, alive, and not killed by concurrent wrong tries.
    const done = await env.DB.prepare(
      `UPDATE phone_verifications SET verified_at = ?, updated_at = ? WHERE ticket_id = ? AND code_hash = ? AND verified_at IS NULL
       AND failed_attempts < ? AND expires_at > ? RETURNING verified_at`,
    )
      .bind(at, at, ticketId, row.code_hash, PHONE_CODE_MAX_ATTEMPTS, at)
      .first();
    if (done) return { status: "verified", expiresAt: null };
    return answerAfterRace(env, ticketId, at);
  }
  const failed = await env.DB.prepare(
    `UPDATE phone_verifications SET failed_attempts = failed_attempts + 1, updated_at = ? WHERE ticket_id = ? AND code_hash = ?
     AND verified_at IS NULL AND failed_attempts < ? RETURNING failed_attempts`,
  )
    .bind(at, ticketId, row.code_hash, PHONE_CODE_MAX_ATTEMPTS)
    .first<{ failed_attempts: number }>();
  if (!failed) return answerAfterRace(env, ticketId, at);
  const attemptsLeft = PHONE_CODE_MAX_ATTEMPTS - failed.failed_attempts;
  throw validationError(
    "code",
    attemptsLeft > 0
      ? "this is not the code that was sent"
      : "this is not the code that was sent, and it was the last try: ask for a new code",
    { attemptsLeft },
  );
}

/** The row changed between the read and the write (a concurrent try or resend): answer by what it is now. */
async function answerAfterRace(env: Env, ticketId: string, at: number): Promise<PhoneVerificationView> {
  const now = await readRow(env, ticketId);
  if (!now) throw nothingToVerify();
  if (now.verified_at !== null) return viewOf(now, at);
  throw deadCode(deadReason(stateOf(now), at) ?? "too_many_attempts");
}

/**
 * A new code, texted like the first: it counts against the per-ticket cap, the day's ceiling and
 * the allowance (429 when refused, the previous code left as it was). Already verified: nothing sent.
 */
export async function resendPhoneCode(env: Env, ticket: CodeTicket, at: number): Promise<PhoneVerificationView> {
  // The send's number is taken first: concurrent resends are distinct messages, and only the last one's code is kept.
  const taken = await env.DB.prepare(
    `UPDATE phone_verifications SET codes_sent = codes_sent + 1, updated_at = ? WHERE ticket_id = ? AND verified_at IS NULL
     RETURNING phone, language, codes_sent`,
  )
    .bind(at, ticket.id)
    .first<{ phone: string; language: string | null; codes_sent: number }>();
  if (!taken) {
    const row = await readRow(env, ticket.id);
    if (!row) throw nothingToVerify();
    return viewOf(row, at);
  }
  const code = newPhoneCode();
  const refused = await textCode(env, ticket, taken, code, taken.codes_sent, at);
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
  await env.DB.prepare(
    `UPDATE phone_verifications SET code_hash = ?, expires_at = ?, failed_attempts = 0, updated_at = ?
     WHERE ticket_id = ? AND codes_sent = ? AND verified_at IS NULL`,
  )
    .bind(await codeHash(env, ticket.id, code), expiresAt, at, ticket.id, taken.codes_sent)
    .run();
  return { status: "pending", expiresAt: iso(expiresAt) };
}
