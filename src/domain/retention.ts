// Personal-data retention (docs/retention.md): how long a visitor's name, phone and delivery
// addresses are kept before the cron sweep anonymises them. Per organization, in days.

export const DATA_RETENTION_DEFAULT_DAYS = 90;
/** A week at least: the room keeps finished tickets a day, and support needs a few days. */
export const DATA_RETENTION_MIN_DAYS = 7;
/** Ten years at most. */
export const DATA_RETENTION_MAX_DAYS = 3650;

const DAY_MS = 86_400_000;

/** Records created before this instant are past the organization's retention at `at`. */
export function retentionCutoff(at: number, retentionDays: number): number {
  return at - retentionDays * DAY_MS;
}
