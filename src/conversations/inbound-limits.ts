import { MINUTE } from "../lib/time";
import type { Deps } from "../http/deps";

// Inbound limits (docs/conversations.md, "Inbound limits"): a customer's texts, WhatsApp
// messages and USSD screens are counted per sending number and per organization, in the exact
// counters of the RateLimiter object. Past a limit the message is taken (the provider is
// answered 200, so it does not retry) but nothing acts and nothing is answered: a flood from one
// phone, or into one business, costs neither the business's SMS nor its staff's attention.

/** One fixed window (aligned on the epoch) for both counters. */
export const INBOUND_WINDOW_MS = 10 * MINUTE;
/** Messages one number may send in a window, all organizations and channels together. */
export const INBOUND_LIMIT_PER_NUMBER = 20;
/** Messages one organization may receive in a window, all numbers and channels together. */
export const INBOUND_LIMIT_PER_ORGANIZATION = 1_200;

/** A configured override (INBOUND_LIMIT_PER_NUMBER / _PER_ORGANIZATION), else the default. */
function limitOf(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n > 0 ? n : fallback;
}

async function take({ env }: Deps, subject: string, limit: number, at: number): Promise<boolean> {
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject));
  const decision = await limiter.hit([{ name: "inbound", limit, windowMs: INBOUND_WINDOW_MS }], at);
  return decision.allowed;
}

export interface InboundGate {
  number(): Promise<boolean>;
  organization(organizationId: string): Promise<boolean>;
}

/**
 * Counts one inbound message of `phone`, and of each organization it is found to be for (at most
 * once per organization): false once a counter is full (a refused message is not counted in it).
 */
export function inboundGate(deps: Deps, phone: string, at: number): InboundGate {
  const { env } = deps;
  let numberAnswer: Promise<boolean> | null = null;
  const organizations = new Map<string, Promise<boolean>>();
  return {
    number() {
      numberAnswer ??= take(deps, `inbound:number:${phone}`, limitOf(env.INBOUND_LIMIT_PER_NUMBER, INBOUND_LIMIT_PER_NUMBER), at);
      return numberAnswer;
    },
    organization(organizationId) {
      let answer = organizations.get(organizationId);
      if (!answer) {
        answer = take(
          deps,
          `inbound:organization:${organizationId}`,
          limitOf(env.INBOUND_LIMIT_PER_ORGANIZATION, INBOUND_LIMIT_PER_ORGANIZATION),
          at,
        );
        organizations.set(organizationId, answer);
      }
      return answer;
    },
  };
}
