import { describe, expect, it } from "vitest";
import { periodEnd, planChange, priceOf, providerForCurrency, type CurrentSubscription } from "../../src/domain/billing";

describe("billing periods", () => {
  it.each([
    ["2026-01-15T10:00:00.000Z", "monthly", "2026-02-15T10:00:00.000Z"],
    ["2026-01-31T10:00:00.000Z", "monthly", "2026-02-28T10:00:00.000Z"],
    ["2028-01-31T10:00:00.000Z", "monthly", "2028-02-29T10:00:00.000Z"],
    ["2026-12-31T23:59:59.999Z", "monthly", "2027-01-31T23:59:59.999Z"],
    ["2028-02-29T08:00:00.000Z", "yearly", "2029-02-28T08:00:00.000Z"],
    ["2026-03-10T12:00:00.000Z", "yearly", "2027-03-10T12:00:00.000Z"],
  ] as const)("%s + one %s period ends %s", (start, interval, end) => {
    expect(new Date(periodEnd(Date.parse(start), interval)).toISOString()).toBe(end);
  });
});

describe("plan changes", () => {
  const on = (plan: CurrentSubscription["plan"], extra: Partial<CurrentSubscription> = {}): CurrentSubscription => ({
    plan,
    billingInterval: "monthly",
    status: "active",
    scheduledPlan: null,
    cancelAtPeriodEnd: false,
    ...extra,
  });
  it.each([
    [on("starter"), "starter", "monthly", "none"],
    [on("starter"), "pro", "monthly", "checkout"],
    [on("pro"), "enterprise", "monthly", "checkout"],
    [on("pro"), "pro", "yearly", "checkout"],
    [on("pro", { status: "past_due" }), "pro", "monthly", "checkout"],
    [on("pro"), "pro", "monthly", "none"],
    [on("pro"), "starter", "monthly", "schedule"],
    [on("enterprise"), "pro", "monthly", "schedule"],
    [on("enterprise", { scheduledPlan: "pro" }), "pro", "monthly", "none"],
    [on("pro", { scheduledPlan: "starter", cancelAtPeriodEnd: true }), "starter", "monthly", "none"],
    [on("pro", { scheduledPlan: "starter", cancelAtPeriodEnd: true }), "pro", "monthly", "resume"],
  ] as const)("%j asking %s %s → %s", (current, plan, interval, expected) => {
    expect(planChange(current, plan, interval)).toBe(expected);
  });

  it("prices are integers in minor units; XOF through FedaPay, EUR/USD through Stripe, the sandbox without keys", () => {
    expect(priceOf("pro", "monthly", "XOF")).toBe(19_000);
    expect(priceOf("enterprise", "yearly", "EUR")).toBe(99_000);
    expect(providerForCurrency("XOF", { stripe: true, fedapay: true })).toBe("fedapay");
    expect(providerForCurrency("USD", { stripe: true, fedapay: false })).toBe("stripe");
    expect(providerForCurrency("EUR", { stripe: false, fedapay: true })).toBe("sandbox");
    expect(providerForCurrency("XOF", { stripe: true, fedapay: false })).toBe("sandbox");
  });
});
