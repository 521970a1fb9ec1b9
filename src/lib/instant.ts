// Timestamps accepted in requests (CONTRACT §1): a full ISO 8601 timestamp with `Z` or an
// offset, or a bare date `YYYY-MM-DD`. A date is kept as a date: what instant it stands for
// (00:00 where?) is the caller's decision, made with the timezone that applies.

export type InstantInput = { kind: "instant"; ms: number } | { kind: "date"; year: number; month: number; day: number };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/i;
const MIN_YEAR = 1970;

function validDate(year: number, month: number, day: number): boolean {
  return year >= MIN_YEAR && month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function parseInstantInput(text: string): InstantInput | null {
  const d = DATE.exec(text);
  if (d) {
    const [year, month, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    return validDate(year, month, day) ? { kind: "date", year, month, day } : null;
  }
  const m = TIMESTAMP.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute] = [1, 2, 3, 4, 5].map((i) => Number(m[i]));
  const second = Number(m[6] ?? 0);
  const millisecond = Number((m[7] ?? "0").padEnd(3, "0").slice(0, 3));
  if (!validDate(year!, month!, day!) || hour! > 23 || minute! > 59 || second > 59) return null;
  let offset = 0;
  const zone = m[8]!;
  if (zone.toUpperCase() !== "Z") {
    const digits = zone.replace(":", "");
    const hours = Number(digits.slice(1, 3));
    const minutes = Number(digits.slice(3, 5));
    if (hours > 14 || minutes > 59) return null;
    offset = (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  return { kind: "instant", ms: Date.UTC(year!, month! - 1, day!, hour!, minute!, second, millisecond) - offset };
}

/** The instant a parsed input stands for, a bare date meaning 00:00 UTC. */
export function utcInstant(input: InstantInput): number {
  return input.kind === "instant" ? input.ms : Date.UTC(input.year, input.month - 1, input.day);
}
