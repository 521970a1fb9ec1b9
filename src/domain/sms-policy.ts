import { parsePhoneNumberFromString } from "libphonenumber-js/mobile";

// What an organization's SMS may cost it (docs/limits.md, "SMS and messaging caps"). Toll
// fraud ("SMS pumping") joins a public queue with numbers the attacker is paid for: premium,
// satellite and shared-cost ranges, or ordinary mobiles in expensive countries, many times.
// The rules here are pure; the counting is in notifications/sms-guard.ts.

/**
 * The number types a person texts: a mobile. The `mobile` metadata of libphonenumber-js knows
 * mobile ranges only (and the non-geographic +8xx/+9xx codes, typed VOIP or unknown), so every
 * premium, shared-cost, satellite, UAN, personal-number or fixed-line range is refused. Where a
 * country's fixed and mobile ranges overlap (+1) the number is typed MOBILE and accepted.
 */
export type PhoneVerdict = { ok: true; country: string } | { ok: false; reason: string };

export function typePhone(phone: string): PhoneVerdict {
  const parsed = parsePhoneNumberFromString(phone);
  if (!parsed || !parsed.isValid()) return { ok: false, reason: "not a mobile number of any country's numbering plan" };
  if (!parsed.country) return { ok: false, reason: "an international or satellite range (+8xx, +9xx) is never texted" };
  if (parsed.getType() !== "MOBILE") return { ok: false, reason: "only personal mobile numbers are texted" };
  return { ok: true, country: parsed.country };
}

/** The country of a number (ISO 3166 alpha-2), or null for non-geographic and invalid ones. */
export function countryOfPhone(phone: string): string | null {
  const parsed = parsePhoneNumberFromString(phone);
  return parsed?.country ?? null;
}

export interface SmsPolicy {
  /** ISO countries whose mobiles may be texted; null = the countries of the locations' phones (or any, when none has one). */
  allowedCountries: string[] | null;
  perPhonePerDay: number;
  perAddressPerDay: number;
  perWidgetKeyPerDay: number;
  perTicket: number;
  dailyCeiling: number;
  businessReservePercent: number;
  /** A visitor's number gets a one-time code as its first SMS, and nothing more until the code is given back. */
  requirePhoneCode: boolean;
  /**
   * The bot check (Cloudflare Turnstile) on public joins that ask for SMS: never, always, or once
   * the day's visitor share of SMS is half used (issue 44).
   */
  botCheck: BotCheck;
}

export const BOT_CHECKS = ["off", "always", "when_half_used"] as const;
export type BotCheck = (typeof BOT_CHECKS)[number];

/** The settable fields, as stored (null = the default). */
export type SmsPolicySettings = { [K in keyof SmsPolicy]: SmsPolicy[K] | null };

export const SMS_POLICY_DEFAULTS = {
  perPhonePerDay: 3,
  perAddressPerDay: 10,
  perWidgetKeyPerDay: 300,
  perTicket: 4,
  businessReservePercent: 20,
  requirePhoneCode: false,
  botCheck: "off",
} as const;

/** The alert to the owners fires once a UTC day, when the day's SMS reach this share of the ceiling. */
export const CEILING_ALERT_PERCENT = 80;

/** A tenth of the plan's monthly allowance, at least 100 (pro 1,000 → 100; enterprise 10,000 → 1,000). */
export function defaultDailyCeiling(smsPerMonth: number | null): number {
  if (smsPerMonth === null) return 1_000;
  return Math.max(100, Math.ceil(smsPerMonth / 10));
}

export function resolvePolicy(settings: Partial<SmsPolicySettings> | null, smsPerMonth: number | null): SmsPolicy {
  const s = settings ?? {};
  return {
    allowedCountries: s.allowedCountries ?? null,
    perPhonePerDay: s.perPhonePerDay ?? SMS_POLICY_DEFAULTS.perPhonePerDay,
    perAddressPerDay: s.perAddressPerDay ?? SMS_POLICY_DEFAULTS.perAddressPerDay,
    perWidgetKeyPerDay: s.perWidgetKeyPerDay ?? SMS_POLICY_DEFAULTS.perWidgetKeyPerDay,
    perTicket: s.perTicket ?? SMS_POLICY_DEFAULTS.perTicket,
    dailyCeiling: s.dailyCeiling ?? defaultDailyCeiling(smsPerMonth),
    businessReservePercent: s.businessReservePercent ?? SMS_POLICY_DEFAULTS.businessReservePercent,
    requirePhoneCode: s.requirePhoneCode ?? SMS_POLICY_DEFAULTS.requirePhoneCode,
    botCheck: s.botCheck ?? SMS_POLICY_DEFAULTS.botCheck,
  };
}

/** What the public (visitors' tickets) may use of an allowance: the rest is the business's reserve. */
export function publicShare(limit: number, reservePercent: number): number {
  return Math.floor((limit * (100 - reservePercent)) / 100);
}

/** The day's count at which the owners are told (80 % of the ceiling, at least 1). */
export function alertThreshold(ceiling: number): number {
  return Math.max(1, Math.ceil((ceiling * CEILING_ALERT_PERCENT) / 100));
}

/**
 * The countries a number may be in: the organization's list, else the countries of its
 * locations' phone numbers; null when neither says anything (no country restriction).
 */
export function allowedCountries(policy: SmsPolicy, locationPhones: (string | null)[]): string[] | null {
  if (policy.allowedCountries) return policy.allowedCountries;
  const found = new Set<string>();
  for (const p of locationPhones) {
    const country = p ? countryOfPhone(p.replace(/[\s().-]/g, "")) : null;
    if (country) found.add(country);
  }
  return found.size > 0 ? [...found].sort() : null;
}
