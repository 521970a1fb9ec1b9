import { and, eq, isNotNull } from "drizzle-orm";
import { database } from "../db/client";
import { locations, smsPolicies, subscriptions } from "../db/schema";
import {
  alertThreshold,
  allowedCountries,
  CEILING_ALERT_PERCENT,
  publicShare,
  resolvePolicy,
  typePhone,
  type SmsPolicy,
  type BotCheck,
  type SmsPolicySettings,
} from "../domain/sms-policy";
import { verifyTurnstile } from "../providers/turnstile";
import { entitlements, type Plan } from "../domain/plans";
import { PHONE_CODE_MESSAGE } from "../domain/phone-codes";
import type { Env } from "../env";
import { ApiError, notFound, validationError } from "../http/errors";
import { DAY, iso, utcDayStart } from "../lib/time";
import { addressKey, ipv6PrefixBits } from "../lib/addresses";
import type { Delivery } from "../domain/deliveries";

/** How the owners' alert goes out: the delivery step, handed in (it calls this guard first). */
export type Deliver = (env: Env, deliveries: Delivery[], at: number) => Promise<unknown>;

// The SMS an organization pays for, guarded against toll fraud (docs/limits.md, "SMS and
// messaging caps"). Two moments: a visitor giving a phone at a join (country, per-number,
// per-address and per-widget-key caps, so a refused number never reaches a ticket), and each
// send (per-ticket cap, the day's ceiling with the business's reserve, the owners' alert).
// Every cap is a conditional upsert on `sms_counters`, exact under concurrency.

export interface OrganizationSmsPolicy {
  policy: SmsPolicy;
  /** The countries a number may be in; null = any (no list and no location phone). */
  countries: string[] | null;
  smsPerMonth: number | null;
}

type PolicyRow = typeof smsPolicies.$inferSelect;

const BOT_CHECKS: readonly BotCheck[] = ["off", "always", "when_half_used"];

function settingsOf(row: PolicyRow | undefined): Partial<SmsPolicySettings> {
  if (!row) return {};
  return {
    allowedCountries: row.allowedCountries === null ? null : (JSON.parse(row.allowedCountries) as string[]),
    perPhonePerDay: row.perPhonePerDay,
    perAddressPerDay: row.perAddressPerDay,
    perWidgetKeyPerDay: row.perWidgetKeyPerDay,
    perTicket: row.perTicket,
    dailyCeiling: row.dailyCeiling,
    businessReservePercent: row.businessReservePercent,
    requirePhoneCode: row.requirePhoneCode === null ? null : row.requirePhoneCode === 1,
    botCheck: BOT_CHECKS.find((b) => b === row.botCheck) ?? null,
  };
}

/** The policy in force, in one D1 round trip. */
export async function loadSmsPolicy(env: Env, organizationId: string): Promise<OrganizationSmsPolicy> {
  const db = database(env.DB);
  const [policies, plans, phones] = await db.batch([
    db.select().from(smsPolicies).where(eq(smsPolicies.organizationId, organizationId)),
    db.select({ plan: subscriptions.plan }).from(subscriptions).where(eq(subscriptions.organizationId, organizationId)),
    db
      .select({ phone: locations.phone })
      .from(locations)
      .where(and(eq(locations.organizationId, organizationId), isNotNull(locations.phone))),
  ]);
  const smsPerMonth = entitlements({ plan: plans[0]?.plan ?? "starter" }).features.smsPerMonth;
  const resolved = resolvePolicy(settingsOf(policies[0]), smsPerMonth);
  return {
    policy: resolved,
    countries: allowedCountries(
      resolved,
      phones.map((r) => r.phone),
    ),
    smsPerMonth,
  };
}

/** Why a number is not texted by this organization, or null when it may be. */
export function refusalOf(phone: string, countries: string[] | null): string | null {
  const verdict = typePhone(phone);
  if (!verdict.ok) return verdict.reason;
  if (countries && !countries.includes(verdict.country)) {
    return `this organization does not text numbers of ${verdict.country} (allowed: ${countries.join(", ")})`;
  }
  return null;
}

const dayKey = (at: number) => iso(at).slice(0, 10);

/** Takes one unit of a counter if it is under `limit`; answers whether it was taken. */
function take(env: Env, organizationId: string, scope: string, subject: string, day: string, limit: number) {
  return env.DB.prepare(
    `INSERT INTO sms_counters (organization_id, scope, subject, day, used) SELECT ?, ?, ?, ?, 1 WHERE ? > 0
     ON CONFLICT (organization_id, scope, subject, day) DO UPDATE SET used = used + 1 WHERE used < ?
     RETURNING used`,
  ).bind(organizationId, scope, subject, day, limit, limit);
}

function giveBack(env: Env, organizationId: string, scope: string, subject: string, day: string) {
  return env.DB.prepare(
    "UPDATE sms_counters SET used = used - 1 WHERE organization_id = ? AND scope = ? AND subject = ? AND day = ? AND used > 0",
  ).bind(organizationId, scope, subject, day);
}

export interface VisitorPhone {
  organizationId: string;
  phone: string;
  /** The caller's address (CF-Connecting-IP). */
  address: string;
  /** The widget key the join came through; null for a customer's own account. */
  widgetKeyId: string | null;
  /**
   * The Turnstile token the page sent (`CF-Turnstile-Response`), null when none: public (widget and
   * kiosk) joins only. Undefined for a customer's own account, which the bot check does not concern.
   */
  botToken?: string | null;
}

/** A phone admitted to a join: the policy it was admitted under, and its units to give back. */
export interface AdmittedPhone extends OrganizationSmsPolicy {
  /** Gives back the day's units this admission took (the join was refused after all). */
  giveBack(): Promise<void>;
}

/**
 * A join that gives a phone: 400 naming `phone` for a number the organization never texts, 429
 * when the number, the address or the widget key has had its day's share of SMS-enabled joins.
 * The units are taken before the ticket exists, so a refused join costs neither a ticket nor an SMS;
 * a join refused after it (./joins.ts) gives them back. Answers the policy in force.
 */
export async function admitVisitorPhone(env: Env, input: VisitorPhone, at: number): Promise<AdmittedPhone> {
  const loaded = await loadSmsPolicy(env, input.organizationId);
  const { policy, countries } = loaded;
  const refusal = refusalOf(input.phone, countries);
  if (refusal) throw validationError("phone", refusal);
  const day = dayKey(at);
  if (input.botToken !== undefined && (await botCheckDue(env, input.organizationId, policy, day))) {
    await assertHuman(env, input.botToken ?? null, input.address);
  }
  const caps: { scope: string; subject: string; limit: number; name: string }[] = [
    { scope: "phone", subject: input.phone, limit: policy.perPhonePerDay, name: "perPhonePerDay" },
    // An IPv6 subscriber's whole /64 is one address here, as in every per-address bucket.
    {
      scope: "address",
      subject: addressKey(input.address, ipv6PrefixBits(env.IPV6_PREFIX_BITS)),
      limit: policy.perAddressPerDay,
      name: "perAddressPerDay",
    },
  ];
  if (input.widgetKeyId)
    caps.push({ scope: "widget_key", subject: input.widgetKeyId, limit: policy.perWidgetKeyPerDay, name: "perWidgetKeyPerDay" });
  const taken = await env.DB.batch(caps.map((c) => take(env, input.organizationId, c.scope, c.subject, day, c.limit)));
  const refused = caps.findIndex((_c, i) => (taken[i]?.results?.length ?? 0) === 0);
  const giveBackAll = async (back: typeof caps) => {
    if (back.length > 0) await env.DB.batch(back.map((c) => giveBack(env, input.organizationId, c.scope, c.subject, day)));
  };
  // The policy admitted under: the join's phone code (./phone-verification.ts) follows it. The
  // units go back if the join is then refused (./joins.ts): only an accepted join spends them.
  if (refused === -1) return { ...loaded, giveBack: () => giveBackAll(caps) };
  await giveBackAll(caps.filter((_c, i) => (taken[i]?.results?.length ?? 0) > 0));
  const cap = caps[refused]!;
  const reset = utcDayStart(at) + DAY;
  const retryAfter = Math.max(1, Math.ceil((reset - at) / 1000));
  throw new ApiError(
    "API_RATE_LIMIT_EXCEEDED",
    `This ${cap.scope.replace("_", " ")} has had its ${cap.limit} SMS-enabled joins of the day: join without a phone, or tomorrow`,
    { field: "phone", cap: cap.name, limit: cap.limit, retryAfter, reset: Math.floor(reset / 1000), window: "sms" },
    { "Retry-After": String(retryAfter) },
  );
}

/** Whether this public join must pass the bot check: always, or once the day's visitor share is half used. */
async function botCheckDue(env: Env, organizationId: string, policy: SmsPolicy, day: string): Promise<boolean> {
  if (policy.botCheck === "off") return false;
  if (policy.botCheck === "always") return true;
  const row = await env.DB.prepare(
    "SELECT used FROM sms_counters WHERE organization_id = ? AND scope = 'day' AND subject = 'org' AND day = ?",
  )
    .bind(organizationId, day)
    .first<{ used: number }>();
  return (row?.used ?? 0) * 2 >= publicShare(policy.dailyCeiling, policy.businessReservePercent);
}

export const BOT_TOKEN_HEADER = "CF-Turnstile-Response";

/** 400 naming the header unless Turnstile vouches for this token (checked server-side, once). */
async function assertHuman(env: Env, token: string | null, address: string): Promise<void> {
  if (!token) {
    throw new ApiError("VALIDATION_ERROR", "This organization asks for the bot check before texting a visitor: send the Turnstile token", {
      field: BOT_TOKEN_HEADER,
      reason: "bot_check_required",
    });
  }
  const verdict = await verifyTurnstile(env, token, address);
  if (verdict === "unconfigured") {
    throw new ApiError("PROVIDER_UNAVAILABLE", "TURNSTILE_SECRET_KEY is not configured: the bot check cannot be verified");
  }
  if (verdict === "failed") {
    throw new ApiError("VALIDATION_ERROR", "The bot check failed: solve it again", { field: BOT_TOKEN_HEADER, reason: "bot_check_failed" });
  }
}

/** The message of a refused send, as the delivery row records it. */
export interface SmsRefusal {
  reason: string;
}

/**
 * The public SMS of a batch of deliveries (visitors' ticket messages): answers, per delivery
 * key, why it must not be sent; those that may be sent have taken their ticket and day units,
 * and their `smsLimit` is lowered to the public share of the month's allowance.
 */
export async function gatePublicSms(
  env: Env,
  claims: { key: string; delivery: Delivery }[],
  at: number,
  deliver: Deliver,
): Promise<Map<string, SmsRefusal>> {
  const refused = new Map<string, SmsRefusal>();
  if (claims.length === 0) return refused;
  const policies = new Map<string, OrganizationSmsPolicy>();
  for (const orgId of new Set(claims.map((c) => c.delivery.organizationId).filter((o): o is string => !!o))) {
    policies.set(orgId, await loadSmsPolicy(env, orgId));
  }
  const day = dayKey(at);
  const open: { key: string; delivery: Delivery; org: string; ticket: string | null }[] = [];
  for (const c of claims) {
    const org = c.delivery.organizationId;
    const p = org ? policies.get(org) : undefined;
    if (!org || !p || c.delivery.target.kind !== "phone") {
      refused.set(c.key, { reason: "SMS_REFUSED: no organization" });
      continue;
    }
    const why = refusalOf(c.delivery.target.phone, p.countries);
    if (why) {
      refused.set(c.key, { reason: `SMS_REFUSED: ${why}` });
      continue;
    }
    open.push({ key: c.key, delivery: c.delivery, org, ticket: c.delivery.data.ticketId ?? null });
  }
  if (open.length === 0) return refused;

  // A number is texted again only once a first message it asked for (the join's) went out. Where
  // the organization requires a code (./phone-verification.ts), the code is that first message and
  // a ticket's every other one (its join's included) waits for the code to come back. A ticket
  // with no code of its own (a transfer's or a rejoin's new ticket) goes by its number: texted once
  // the number was verified on another ticket, silent while a code to it is unanswered; a number
  // never sent a code (joined before the setting) keeps the first-message rule.
  const coded = (o: { org: string }) => policies.get(o.org)!.policy.requirePhoneCode;
  const later = open.filter((o) => o.delivery.type !== PHONE_CODE_MESSAGE && (o.delivery.type !== "ticket.created" || coded(o)));
  if (later.length > 0) {
    const proven = await env.DB.batch<{ sent: number; has_code: number; verified: number; phone_coded: number; phone_verified: number }>(
      later.map((o) => {
        const phone = (o.delivery.target as { phone: string }).phone;
        return env.DB.prepare(
          `SELECT EXISTS (SELECT 1 FROM notification_deliveries WHERE organization_id = ?1 AND channel IN ('sms', 'whatsapp') AND recipient = ?2 AND status = 'sent') AS sent,
           EXISTS (SELECT 1 FROM phone_verifications WHERE ticket_id = ?3) AS has_code,
           EXISTS (SELECT 1 FROM phone_verifications WHERE ticket_id = ?3 AND verified_at IS NOT NULL) AS verified,
           EXISTS (SELECT 1 FROM phone_verifications WHERE organization_id = ?1 AND phone = ?2) AS phone_coded,
           EXISTS (SELECT 1 FROM phone_verifications WHERE organization_id = ?1 AND phone = ?2 AND verified_at IS NOT NULL) AS phone_verified`,
        ).bind(o.org, phone, o.ticket ?? "");
      }),
    );
    const NOT_VERIFIED = "SMS_REFUSED: the number was not verified";
    later.forEach((o, i) => {
      const row = proven[i]?.results?.[0];
      if (coded(o) && (row?.has_code || o.delivery.type === "ticket.created")) {
        if (!row?.verified) refused.set(o.key, { reason: NOT_VERIFIED });
      } else if (coded(o) && row?.phone_coded) {
        if (!row.phone_verified) refused.set(o.key, { reason: NOT_VERIFIED });
      } else if (!row?.sent) refused.set(o.key, { reason: "SMS_REFUSED: no first message to this number was delivered" });
    });
  }
  const candidates = open.filter((o) => !refused.has(o.key));
  if (candidates.length === 0) return refused;

  // Per ticket (its lifetime), then the day's public share of the ceiling; in this order, in one batch.
  const statements: D1PreparedStatement[] = [];
  for (const o of candidates) {
    const p = policies.get(o.org)!.policy;
    statements.push(take(env, o.org, "ticket", o.ticket ?? o.key, "-", p.perTicket));
    statements.push(take(env, o.org, "day", "org", day, publicShare(p.dailyCeiling, p.businessReservePercent)));
  }
  const taken = await env.DB.batch(statements);
  const refunds: D1PreparedStatement[] = [];
  const alerts = new Map<string, number>();
  candidates.forEach((o, i) => {
    const ticketOk = (taken[2 * i]?.results?.length ?? 0) > 0;
    const dayRow = taken[2 * i + 1]?.results?.[0] as { used: number } | undefined;
    const p = policies.get(o.org)!;
    if (!ticketOk || !dayRow) {
      if (ticketOk) refunds.push(giveBack(env, o.org, "ticket", o.ticket ?? o.key, "-"));
      if (dayRow) refunds.push(giveBack(env, o.org, "day", "org", day));
      refused.set(o.key, {
        reason: ticketOk
          ? `SMS_REFUSED: the day's public share of the ceiling (${publicShare(p.policy.dailyCeiling, p.policy.businessReservePercent)} of ${p.policy.dailyCeiling}) is used`
          : `SMS_REFUSED: this ticket had its ${p.policy.perTicket} SMS`,
      });
      return;
    }
    alerts.set(o.org, Math.max(alerts.get(o.org) ?? 0, dayRow.used));
    if (p.smsPerMonth !== null) o.delivery.smsLimit = publicShare(p.smsPerMonth, p.policy.businessReservePercent);
  });
  if (refunds.length > 0) await env.DB.batch(refunds);
  for (const [org, used] of alerts) await alertIfNearCeiling(env, org, used, policies.get(org)!.policy, at, deliver);
  return refused;
}

/**
 * A business's own SMS takes one unit of the day's whole ceiling (the reserve included): 400
 * naming `phone` for a number it may not text, 403 QUOTA_EXCEEDED when the day is used up.
 * Answers the function that gives the unit back (when the month's allowance then refuses).
 */
export async function takeBusinessSms(
  env: Env,
  organizationId: string,
  phone: string,
  at: number,
  deliver: Deliver,
): Promise<() => Promise<void>> {
  const { policy, countries } = await loadSmsPolicy(env, organizationId);
  const refusal = refusalOf(phone, countries);
  if (refusal) throw validationError("phone", refusal);
  const day = dayKey(at);
  const row = await take(env, organizationId, "day", "org", day, policy.dailyCeiling).first<{ used: number }>();
  if (!row) {
    throw new ApiError("QUOTA_EXCEEDED", `The day's ceiling of ${policy.dailyCeiling} SMS is reached`, {
      limit: policy.dailyCeiling,
      used: policy.dailyCeiling,
      resetsAt: iso(utcDayStart(at) + DAY),
    });
  }
  await alertIfNearCeiling(env, organizationId, row.used, policy, at, deliver);
  return async () => {
    await giveBack(env, organizationId, "day", "org", day).run();
  };
}

const ALERT_TEXT = {
  en: (used: number, ceiling: number) => ({
    title: "SMS: 80 % of today's ceiling",
    body: `${used} of the ${ceiling} SMS allowed today are sent. Visitors' messages stop at ${CEILING_ALERT_PERCENT} %; yours keep the rest. Check for abuse, or raise the ceiling in the SMS policy.`,
  }),
  fr: (used: number, ceiling: number) => ({
    title: "SMS : 80 % du plafond du jour",
    body: `${used} des ${ceiling} SMS autorisés aujourd'hui sont envoyés. Les messages des visiteurs s'arrêtent à ${CEILING_ALERT_PERCENT} % ; les vôtres gardent le reste. Vérifiez les abus, ou relevez le plafond dans la politique SMS.`,
  }),
};

/** Once a UTC day, the owners hear (in-app and push) that the day's SMS reached 80 % of the ceiling. */
async function alertIfNearCeiling(
  env: Env,
  organizationId: string,
  used: number,
  policy: SmsPolicy,
  at: number,
  deliver: Deliver,
): Promise<void> {
  if (used < alertThreshold(policy.dailyCeiling)) return;
  const day = dayKey(at);
  const first = await env.DB.prepare(
    "INSERT INTO sms_counters (organization_id, scope, subject, day, used) VALUES (?, 'alert', 'ceiling', ?, 1) ON CONFLICT DO NOTHING",
  )
    .bind(organizationId, day)
    .run();
  if (first.meta.changes === 0) return;
  const owners = await env.DB.prepare(
    `SELECT u.id, u.language, d.token FROM members m JOIN users u ON u.id = m.user_id
     LEFT JOIN push_devices d ON d.user_id = u.id WHERE m.organization_id = ? AND m.role = 'owner'`,
  )
    .bind(organizationId)
    .all<{ id: string; language: string; token: string | null }>();
  const eventId = `sms_ceiling:${organizationId}:${day}`;
  const deliveries: Delivery[] = [];
  const told = new Set<string>();
  for (const o of owners.results) {
    const text = (o.language === "fr" ? ALERT_TEXT.fr : ALERT_TEXT.en)(used, policy.dailyCeiling);
    const base = { eventId, organizationId, type: "sms.ceiling_warning", data: { type: "sms.ceiling_warning" }, ...text };
    if (!told.has(o.id)) deliveries.push({ ...base, channel: "in_app", target: { kind: "user", userId: o.id } });
    told.add(o.id);
    if (o.token) deliveries.push({ ...base, channel: "push", target: { kind: "device", token: o.token } });
  }
  await deliver(env, deliveries, at);
}

// ---- the settings route's side --------------------------------------------------------------

export interface SmsPolicyView extends SmsPolicy {
  /** The countries in force: the list, else the locations' countries; null = any. */
  effectiveCountries: string[] | null;
  alertAtPercent: number;
  today: { sent: number; publicLimit: number; resetsAt: string };
}

export async function readSmsPolicy(env: Env, organizationId: string, at: number): Promise<SmsPolicyView> {
  const { policy, countries } = await loadSmsPolicy(env, organizationId);
  const row = await env.DB.prepare(
    "SELECT used FROM sms_counters WHERE organization_id = ? AND scope = 'day' AND subject = 'org' AND day = ?",
  )
    .bind(organizationId, dayKey(at))
    .first<{ used: number }>();
  return {
    ...policy,
    effectiveCountries: countries,
    alertAtPercent: CEILING_ALERT_PERCENT,
    today: {
      sent: row?.used ?? 0,
      publicLimit: publicShare(policy.dailyCeiling, policy.businessReservePercent),
      resetsAt: iso(utcDayStart(at) + DAY),
    },
  };
}

const COLUMNS: Record<Exclude<keyof SmsPolicySettings, "allowedCountries" | "requirePhoneCode">, string> = {
  botCheck: "bot_check",
  perPhonePerDay: "per_phone_per_day",
  perAddressPerDay: "per_address_per_day",
  perWidgetKeyPerDay: "per_widget_key_per_day",
  perTicket: "per_ticket",
  dailyCeiling: "daily_ceiling",
  businessReservePercent: "business_reserve_percent",
};

/** A PATCH: a named field is set (null = back to its default); an unnamed one stays. */
export async function updateSmsPolicy(
  env: Env,
  organizationId: string,
  changes: Partial<SmsPolicySettings>,
  at: number,
): Promise<SmsPolicyView> {
  const exists = await env.DB.prepare("SELECT 1 AS ok FROM organizations WHERE id = ?").bind(organizationId).first();
  if (!exists) throw notFound("Organization");
  const sets: string[] = [];
  const values: unknown[] = [];
  if (changes.allowedCountries !== undefined) {
    sets.push("allowed_countries = ?");
    values.push(changes.allowedCountries === null ? null : JSON.stringify([...new Set(changes.allowedCountries)].sort()));
  }
  if (changes.requirePhoneCode !== undefined) {
    sets.push("require_phone_code = ?");
    values.push(changes.requirePhoneCode === null ? null : changes.requirePhoneCode ? 1 : 0);
  }
  for (const [field, column] of Object.entries(COLUMNS) as [keyof typeof COLUMNS, string][]) {
    if (changes[field] === undefined) continue;
    sets.push(`${column} = ?`);
    values.push(changes[field]);
  }
  await env.DB.batch([
    env.DB.prepare("INSERT INTO sms_policies (organization_id, updated_at) VALUES (?, ?) ON CONFLICT DO NOTHING").bind(organizationId, at),
    env.DB.prepare(`UPDATE sms_policies SET ${[...sets, "updated_at = ?"].join(", ")} WHERE organization_id = ?`).bind(
      ...values,
      at,
      organizationId,
    ),
  ]);
  return readSmsPolicy(env, organizationId, at);
}
