// What every outbound notification provider answers. `transient` failures are retried with
// backoff; the others are final and recorded with the provider's answer.

export type SendOutcome =
  | { ok: true; provider: string; response: string }
  | { ok: false; provider: string; transient: boolean; response: string; deadToken?: boolean };

/** At most this much of a provider's answer is kept on the delivery row. */
const ANSWER_LIMIT = 1000;

export async function answerOf(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  return `${res.status} ${text}`.slice(0, ANSWER_LIMIT);
}

/** 5xx, 429 and 408 are worth retrying; other 4xx answers will not change. */
export function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

export function networkFailure(provider: string, err: unknown): SendOutcome {
  return { ok: false, provider, transient: true, response: `network: ${String(err)}`.slice(0, ANSWER_LIMIT) };
}

export function trimUrl(base: string): string {
  return base.replace(/\/+$/, "");
}
