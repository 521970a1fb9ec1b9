import { and, eq, exists, gt, inArray, isNotNull, lt, sql, type SQL } from "drizzle-orm";
import { nonEmpty } from "../db/client";
import {
  locations,
  members,
  notificationDeliveries,
  organizations,
  phoneVerifications,
  pushDevices,
  smsCounters,
  smsPolicies,
  subscriptions,
  users,
} from "../db/schema";
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
import { ApiError, notFound, validationError } from "../http/errors";
import { DAY, iso, utcDayStart } from "../lib/time";
import { addressKey, ipv6PrefixBits } from "../lib/addresses";
import type { Delivery } from "../domain/deliveries";
import { type Deps } from "../http/deps";

/** How the owners' alert goes out: the delivery step, handed in (it calls this guard first). */
export type Deliver = (deps: Deps, deliveries: Delivery[], at: number) => Promise<unknown>;

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
export async function loadSmsPolicy({ db }: Deps, organizationId: string): Promise<OrganizationSmsPolicy> {
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

type Scope = (typeof smsCounters.$inferSelect)["scope"];

/** One counter of the day (or of a ticket's lifetime, day "-"). */
interface Counter {
  organizationId: string;
  scope: Scope;
  subject: string;
  day: string;
}

/** One unit of a counter taken while it is under `limit`: the conditional upsert answers the new count. */
function take({ db }: Deps, c: Counter, limit: number) {
  return db
    .insert(smsCounters)
    .values({ organizationId: c.organizationId, scope: c.scope, subject: c.subject, day: c.day, used: 1 })
    .onConflictDoUpdate({
      target: [smsCounters.organizationId, smsCounters.scope, smsCounters.subject, smsCounters.day],
      set: { used: sql`${smsCounters.used} + 1` },
      setWhere: lt(smsCounters.used, limit),
    })
    .returning({ used: smsCounters.used });
}

/**
 * Takes one unit of each counter under its limit, in one batch (all or none written); answers per
 * counter the count after taking, or null when it was at its limit. A limit of 0 or less takes
 * nothing and writes no row (the statement is left out of the batch).
 */
async function takeUnits(deps: Deps, takes: (Counter & { limit: number })[]): Promise<(number | null)[]> {
  const { db } = deps;
  const open = takes.flatMap((t, i) => (t.limit > 0 ? [{ t, i }] : []));
  const statements = nonEmpty(open.map(({ t }) => take(deps, t, t.limit)));
  const answers: (number | null)[] = takes.map(() => null);
  if (!statements) return answers;
  const taken = await db.batch(statements);
  open.forEach(({ i }, k) => (answers[i] = taken[k]?.[0]?.used ?? null));
  return answers;
}

function giveBack({ db }: Deps, c: Counter) {
  return db
    .update(smsCounters)
    .set({ used: sql`${smsCounters.used} - 1` })
    .where(
      and(
        eq(smsCounters.organizationId, c.organizationId),
        eq(smsCounters.scope, c.scope),
        eq(smsCounters.subject, c.subject),
        eq(smsCounters.day, c.day),
        gt(smsCounters.used, 0),
      ),
    );
}

/** Gives back one unit of each counter, in one batch. */
async function giveBackUnits(deps: Deps, counters: Counter[]): Promise<void> {
  const { db } = deps;
  const statements = nonEmpty(counters.map((c) => giveBack(deps, c)));
  if (statements) await db.batch(statements);
}

/** The organization's public SMS of the day so far. */
async function dayUsed({ db }: Deps, organizationId: string, day: string): Promise<number> {
  const row = await db
    .select({ used: smsCounters.used })
    .from(smsCounters)
    .where(
      and(
        eq(smsCounters.organizationId, organizationId),
        eq(smsCounters.scope, "day"),
        eq(smsCounters.subject, "org"),
        eq(smsCounters.day, day),
      ),
    )
    .get();
  return row?.used ?? 0;
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
export async function admitVisitorPhone(deps: Deps, input: VisitorPhone, at: number): Promise<AdmittedPhone> {
  const { env } = deps;
  const loaded = await loadSmsPolicy(deps, input.organizationId);
  const { policy, countries } = loaded;
  const refusal = refusalOf(input.phone, countries);
  if (refusal) throw validationError("phone", refusal);
  const day = dayKey(at);
  if (input.botToken !== undefined && (await botCheckDue(deps, input.organizationId, policy, day))) {
    await assertHuman(deps, input.botToken ?? null, input.address);
  }
  const organizationId = input.organizationId;
  const caps: (Counter & { limit: number; name: string })[] = [
    { organizationId, scope: "phone", subject: input.phone, day, limit: policy.perPhonePerDay, name: "perPhonePerDay" },
    // An IPv6 subscriber's whole /64 is one address here, as in every per-address bucket.
    {
      organizationId,
      scope: "address",
      subject: addressKey(input.address, ipv6PrefixBits(env.IPV6_PREFIX_BITS)),
      day,
      limit: policy.perAddressPerDay,
      name: "perAddressPerDay",
    },
  ];
  if (input.widgetKeyId)
    caps.push({
      organizationId,
      scope: "widget_key",
      subject: input.widgetKeyId,
      day,
      limit: policy.perWidgetKeyPerDay,
      name: "perWidgetKeyPerDay",
    });
  const taken = await takeUnits(deps, caps);
  const refused = taken.indexOf(null);
  const giveBackAll = (back: Counter[]) => giveBackUnits(deps, back);
  // The policy admitted under: the join's phone code (./phone-verification.ts) follows it. The
  // units go back if the join is then refused (./joins.ts): only an accepted join spends them.
  if (refused === -1) return { ...loaded, giveBack: () => giveBackAll(caps) };
  await giveBackAll(caps.filter((_c, i) => taken[i] !== null));
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
async function botCheckDue(deps: Deps, organizationId: string, policy: SmsPolicy, day: string): Promise<boolean> {
  if (policy.botCheck === "off") return false;
  if (policy.botCheck === "always") return true;
  const used = await dayUsed(deps, organizationId, day);
  return used * 2 >= publicShare(policy.dailyCeiling, policy.businessReservePercent);
}

export const BOT_TOKEN_HEADER = "CF-Turnstile-Response";

/** 400 naming the header unless Turnstile vouches for this token (checked server-side, once). */
async function assertHuman({ env }: Deps, token: string | null, address: string): Promise<void> {
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

/**
 * What is known of a number before it is texted again: a message to it went out, the ticket has a
 * code (verified or not), the number had a code on any ticket (verified or not). Read on the
 * organization's row (always there while its deliveries are), one statement per delivery.
 */
function proofOf({ db }: Deps, organizationId: string, phone: string, ticketId: string) {
  const one = { one: sql`1` };
  const code = (...where: SQL[]) =>
    exists(
      db
        .select(one)
        .from(phoneVerifications)
        .where(and(...where)),
    ).mapWith(Boolean);
  const ofTicket = eq(phoneVerifications.ticketId, ticketId);
  const ofPhone = [eq(phoneVerifications.organizationId, organizationId), eq(phoneVerifications.phone, phone)];
  const verified = isNotNull(phoneVerifications.verifiedAt);
  return db
    .select({
      sent: exists(
        db
          .select(one)
          .from(notificationDeliveries)
          .where(
            and(
              eq(notificationDeliveries.organizationId, organizationId),
              inArray(notificationDeliveries.channel, ["sms", "whatsapp"]),
              eq(notificationDeliveries.recipient, phone),
              eq(notificationDeliveries.status, "sent"),
            ),
          ),
      ).mapWith(Boolean),
      hasCode: code(ofTicket),
      verified: code(ofTicket, verified),
      phoneCoded: code(...ofPhone),
      phoneVerified: code(...ofPhone, verified),
    })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
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
  deps: Deps,
  claims: { key: string; delivery: Delivery }[],
  at: number,
  deliver: Deliver,
): Promise<Map<string, SmsRefusal>> {
  const { db } = deps;
  const refused = new Map<string, SmsRefusal>();
  if (claims.length === 0) return refused;
  const policies = new Map<string, OrganizationSmsPolicy>();
  for (const orgId of new Set(claims.map((c) => c.delivery.organizationId).filter((o): o is string => !!o))) {
    policies.set(orgId, await loadSmsPolicy(deps, orgId));
  }
  const day = dayKey(at);
  const open: { key: string; delivery: Delivery; org: string; phone: string; ticket: string | null }[] = [];
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
    open.push({ key: c.key, delivery: c.delivery, org, phone: c.delivery.target.phone, ticket: c.delivery.data.ticketId ?? null });
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
    const statements = nonEmpty(later.map((o) => proofOf(deps, o.org, o.phone, o.ticket ?? "")));
    const proven = statements ? await db.batch(statements) : [];
    const NOT_VERIFIED = "SMS_REFUSED: the number was not verified";
    later.forEach((o, i) => {
      const row = proven[i]?.[0];
      if (coded(o) && (row?.hasCode || o.delivery.type === "ticket.created")) {
        if (!row?.verified) refused.set(o.key, { reason: NOT_VERIFIED });
      } else if (coded(o) && row?.phoneCoded) {
        if (!row.phoneVerified) refused.set(o.key, { reason: NOT_VERIFIED });
      } else if (!row?.sent) refused.set(o.key, { reason: "SMS_REFUSED: no first message to this number was delivered" });
    });
  }
  const candidates = open.filter((o) => !refused.has(o.key));
  if (candidates.length === 0) return refused;

  // Per ticket (its lifetime), then the day's public share of the ceiling; in this order, in one batch.
  const takes = candidates.flatMap((o) => {
    const p = policies.get(o.org)!.policy;
    return [
      { organizationId: o.org, scope: "ticket" as const, subject: o.ticket ?? o.key, day: "-", limit: p.perTicket },
      { organizationId: o.org, scope: "day" as const, subject: "org", day, limit: publicShare(p.dailyCeiling, p.businessReservePercent) },
    ];
  });
  const taken = await takeUnits(deps, takes);
  const refunds: Counter[] = [];
  const alerts = new Map<string, number>();
  candidates.forEach((o, i) => {
    const ticketOk = taken[2 * i] != null;
    const dayUsedNow = taken[2 * i + 1] ?? null;
    const p = policies.get(o.org)!;
    if (!ticketOk || dayUsedNow === null) {
      if (ticketOk) refunds.push(takes[2 * i]!);
      if (dayUsedNow !== null) refunds.push(takes[2 * i + 1]!);
      refused.set(o.key, {
        reason: ticketOk
          ? `SMS_REFUSED: the day's public share of the ceiling (${publicShare(p.policy.dailyCeiling, p.policy.businessReservePercent)} of ${p.policy.dailyCeiling}) is used`
          : `SMS_REFUSED: this ticket had its ${p.policy.perTicket} SMS`,
      });
      return;
    }
    alerts.set(o.org, Math.max(alerts.get(o.org) ?? 0, dayUsedNow));
    if (p.smsPerMonth !== null) o.delivery.smsLimit = publicShare(p.smsPerMonth, p.policy.businessReservePercent);
  });
  await giveBackUnits(deps, refunds);
  for (const [org, used] of alerts) await alertIfNearCeiling(deps, org, used, policies.get(org)!.policy, at, deliver);
  return refused;
}

/**
 * A business's own SMS takes one unit of the day's whole ceiling (the reserve included): 400
 * naming `phone` for a number it may not text, 403 QUOTA_EXCEEDED when the day is used up.
 * Answers the function that gives the unit back (when the month's allowance then refuses).
 */
export async function takeBusinessSms(
  deps: Deps,
  organizationId: string,
  phone: string,
  at: number,
  deliver: Deliver,
): Promise<() => Promise<void>> {
  const { policy, countries } = await loadSmsPolicy(deps, organizationId);
  const refusal = refusalOf(phone, countries);
  if (refusal) throw validationError("phone", refusal);
  const day = dayKey(at);
  const counter: Counter = { organizationId, scope: "day", subject: "org", day };
  const [used] = await takeUnits(deps, [{ ...counter, limit: policy.dailyCeiling }]);
  if (used === null || used === undefined) {
    throw new ApiError("QUOTA_EXCEEDED", `The day's ceiling of ${policy.dailyCeiling} SMS is reached`, {
      limit: policy.dailyCeiling,
      used: policy.dailyCeiling,
      resetsAt: iso(utcDayStart(at) + DAY),
    });
  }
  await alertIfNearCeiling(deps, organizationId, used, policy, at, deliver);
  return () => giveBackUnits(deps, [counter]);
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
  deps: Deps,
  organizationId: string,
  used: number,
  policy: SmsPolicy,
  at: number,
  deliver: Deliver,
): Promise<void> {
  const { db } = deps;
  if (used < alertThreshold(policy.dailyCeiling)) return;
  const day = dayKey(at);
  const first = await db
    .insert(smsCounters)
    .values({ organizationId, scope: "alert", subject: "ceiling", day, used: 1 })
    .onConflictDoNothing()
    .returning({ used: smsCounters.used });
  if (first.length === 0) return;
  const owners = await db
    .select({ id: users.id, language: users.language, token: pushDevices.token })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .leftJoin(pushDevices, eq(pushDevices.userId, users.id))
    .where(and(eq(members.organizationId, organizationId), eq(members.role, "owner")));
  const eventId = `sms_ceiling:${organizationId}:${day}`;
  const deliveries: Delivery[] = [];
  const told = new Set<string>();
  for (const o of owners) {
    const text = (o.language === "fr" ? ALERT_TEXT.fr : ALERT_TEXT.en)(used, policy.dailyCeiling);
    const base = { eventId, organizationId, type: "sms.ceiling_warning", data: { type: "sms.ceiling_warning" }, ...text };
    if (!told.has(o.id)) deliveries.push({ ...base, channel: "in_app", target: { kind: "user", userId: o.id } });
    told.add(o.id);
    if (o.token) deliveries.push({ ...base, channel: "push", target: { kind: "device", token: o.token } });
  }
  await deliver(deps, deliveries, at);
}

// ---- the settings route's side --------------------------------------------------------------

export interface SmsPolicyView extends SmsPolicy {
  /** The countries in force: the list, else the locations' countries; null = any. */
  effectiveCountries: string[] | null;
  alertAtPercent: number;
  today: { sent: number; publicLimit: number; resetsAt: string };
}

export async function readSmsPolicy(deps: Deps, organizationId: string, at: number): Promise<SmsPolicyView> {
  const { policy, countries } = await loadSmsPolicy(deps, organizationId);
  const sent = await dayUsed(deps, organizationId, dayKey(at));
  return {
    ...policy,
    effectiveCountries: countries,
    alertAtPercent: CEILING_ALERT_PERCENT,
    today: {
      sent,
      publicLimit: publicShare(policy.dailyCeiling, policy.businessReservePercent),
      resetsAt: iso(utcDayStart(at) + DAY),
    },
  };
}

/** A PATCH: a named field is set (null = back to its default); an unnamed one stays. */
export async function updateSmsPolicy(
  deps: Deps,
  organizationId: string,
  changes: Partial<SmsPolicySettings>,
  at: number,
): Promise<SmsPolicyView> {
  const { db } = deps;
  const organization = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, organizationId)).get();
  if (!organization) throw notFound("Organization");
  const { allowedCountries, requirePhoneCode } = changes;
  // Drizzle leaves a field that is undefined out of the SET: an unnamed setting stays as it is.
  const set = {
    allowedCountries:
      allowedCountries === undefined || allowedCountries === null
        ? allowedCountries
        : JSON.stringify([...new Set(allowedCountries)].sort()),
    requirePhoneCode: requirePhoneCode === undefined || requirePhoneCode === null ? requirePhoneCode : requirePhoneCode ? 1 : 0,
    botCheck: changes.botCheck,
    perPhonePerDay: changes.perPhonePerDay,
    perAddressPerDay: changes.perAddressPerDay,
    perWidgetKeyPerDay: changes.perWidgetKeyPerDay,
    perTicket: changes.perTicket,
    dailyCeiling: changes.dailyCeiling,
    businessReservePercent: changes.businessReservePercent,
    updatedAt: at,
  } satisfies Partial<typeof smsPolicies.$inferInsert>;
  await db.batch([
    db.insert(smsPolicies).values({ organizationId, updatedAt: at }).onConflictDoNothing(),
    db.update(smsPolicies).set(set).where(eq(smsPolicies.organizationId, organizationId)),
  ]);
  return readSmsPolicy(deps, organizationId, at);
}
