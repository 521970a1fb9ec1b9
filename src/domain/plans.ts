// Plans, rate tiers and quotas in one table (CONTRACT §9). Billing changes the plan name on
// the subscription row; everything it entitles is read from here.

export const PLANS = ["starter", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export const RATE_TIERS = ["free", "starter", "business", "enterprise"] as const;
export type RateTier = (typeof RATE_TIERS)[number];

/** null = unlimited */
export type Limit = number | null;

export interface RateLimits {
  perMinute: number;
  perDay: Limit;
}

export const RATE_TIER_LIMITS: Record<RateTier, RateLimits> = {
  free: { perMinute: 60, perDay: 1_000 },
  starter: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
  enterprise: { perMinute: 5_000, perDay: null },
};

export interface Quotas {
  ticketsPerMonth: Limit;
  apiCallsPerMonth: Limit;
  webhooks: Limit;
}

export const RATE_TIER_QUOTAS: Record<RateTier, Quotas> = {
  free: { ticketsPerMonth: 500, apiCallsPerMonth: 10_000, webhooks: 1 },
  starter: { ticketsPerMonth: 5_000, apiCallsPerMonth: 100_000, webhooks: 5 },
  business: { ticketsPerMonth: 50_000, apiCallsPerMonth: 1_000_000, webhooks: 25 },
  enterprise: { ticketsPerMonth: null, apiCallsPerMonth: null, webhooks: null },
};

export interface PlanFeatures {
  maxServices: Limit;
  maxQueues: Limit;
  ticketsPerMonth: Limit;
  sms: boolean;
  messagingApps: boolean;
  /** SMS a month (POST /v1/notifications/sms and ticket SMS together); 0 = no SMS, null = unlimited. */
  smsPerMonth: Limit;
}

export const PLAN_FEATURES: Record<Plan, PlanFeatures> = {
  starter: { maxServices: 1, maxQueues: 1, ticketsPerMonth: 50, sms: false, messagingApps: false, smsPerMonth: 0 },
  pro: { maxServices: null, maxQueues: null, ticketsPerMonth: null, sms: true, messagingApps: false, smsPerMonth: 1_000 },
  enterprise: { maxServices: null, maxQueues: null, ticketsPerMonth: null, sms: true, messagingApps: true, smsPerMonth: 10_000 },
};

export const PLAN_RATE_TIER: Record<Plan, RateTier> = {
  starter: "free",
  pro: "business",
  enterprise: "enterprise",
};

export interface SubscriptionLimitsInput {
  plan: Plan;
  rateTierOverride?: RateTier | null;
  customRatePerMinute?: number | null;
  customRatePerDay?: number | null;
}

export interface Entitlements {
  plan: Plan;
  rateTier: RateTier;
  rate: RateLimits;
  features: PlanFeatures;
  quotas: Quotas;
}

function stricter(a: Limit, b: Limit): Limit {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

/** Everything a subscription entitles; where two stated limits differ, the stricter applies. */
export function entitlements(sub: SubscriptionLimitsInput): Entitlements {
  const rateTier = sub.rateTierOverride ?? PLAN_RATE_TIER[sub.plan];
  const base = RATE_TIER_LIMITS[rateTier];
  const rate: RateLimits =
    rateTier === "enterprise"
      ? { perMinute: sub.customRatePerMinute ?? base.perMinute, perDay: sub.customRatePerDay ?? base.perDay }
      : base;
  const features = PLAN_FEATURES[sub.plan];
  const tierQuotas = RATE_TIER_QUOTAS[rateTier];
  return {
    plan: sub.plan,
    rateTier,
    rate,
    features,
    quotas: { ...tierQuotas, ticketsPerMonth: stricter(features.ticketsPerMonth, tierQuotas.ticketsPerMonth) },
  };
}

// Prices (billing). Integer minor units: cents for EUR and USD, whole francs for XOF (no
// decimals). EUR and USD are collected through Stripe, XOF through FedaPay. A yearly price
// is ten months of the monthly one.

export const BILLING_INTERVALS = ["monthly", "yearly"] as const;
export type BillingInterval = (typeof BILLING_INTERVALS)[number];

export const CURRENCIES = ["EUR", "USD", "XOF"] as const;
export type Currency = (typeof CURRENCIES)[number];

export type PaidPlan = Exclude<Plan, "starter">;

export const PRICES: Record<PaidPlan, Record<BillingInterval, Record<Currency, number>>> = {
  pro: {
    monthly: { EUR: 2_900, USD: 3_200, XOF: 19_000 },
    yearly: { EUR: 29_000, USD: 32_000, XOF: 190_000 },
  },
  enterprise: {
    monthly: { EUR: 9_900, USD: 10_900, XOF: 65_000 },
    yearly: { EUR: 99_000, USD: 109_000, XOF: 650_000 },
  },
};

/** Decimal places of each currency's minor unit (Stripe also treats XOF as zero-decimal). */
export const CURRENCY_DECIMALS: Record<Currency, number> = { EUR: 2, USD: 2, XOF: 0 };

/** Plans ordered by what they entitle: moving down is a downgrade, applied at period end. */
export const PLAN_RANK: Record<Plan, number> = { starter: 0, pro: 1, enterprise: 2 };

/** The monthly API-call quota (null = unlimited); widget keys' traffic does not count (CONTRACT §10). */
export function apiCallsPerMonth(sub: SubscriptionLimitsInput): Limit {
  return entitlements(sub).quotas.apiCallsPerMonth;
}
