export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function isoOrNull(ms: number | null | undefined): string | null {
  return ms == null ? null : iso(ms);
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Start of the UTC calendar month containing `ms`, and of the next one. */
export function utcMonth(ms: number): { key: string; start: number; end: number } {
  const d = new Date(ms);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { key: iso(start).slice(0, 7), start, end };
}

export function utcDayStart(ms: number): number {
  return ms - (ms % DAY);
}
