// What analytics count, as pure functions (docs/analytics.md says the same in words).
//
// Each ticket contributes one set of figures, its *facts*, to the aggregate row of its queue
// and of the UTC hour it was created in (a cohort: the ticket's whole story is counted in the
// hour it arrived). A ticket's queue, creation hour and channel never change, so every
// update of a ticket moves figures inside that one row only.
//
// - created: every ticket.
// - served: status served. noShow: expired (no-show timeout) or skipped by an operator.
//   transferred: cancelled because it moved to another queue (transferred_to_id set).
//   cancelled: any other cancellation (visitor, queue cleared or archived).
// - wait: join → call (called_at − created_at), over tickets that were called.
// - service: serve → complete (served_at − serving_at), over served tickets.
// - abandonment: (noShow + cancelled) / (served + noShow + cancelled); transfers left out
//   (they go on in another queue), live tickets too. null when nothing has ended.
// - estimate error: |actual wait − the first estimate the join answered|, over tickets that
//   had an estimate and were called; bias: actual − promised (positive: waited longer).

import { HOUR, MINUTE } from "../lib/time";

export const ANALYTICS_CHANNELS = ["app", "widget", "qr", "nfc", "remote", "operator", "vip", "transfer", "recovery"] as const;
export type AnalyticsChannel = (typeof ANALYTICS_CHANNELS)[number];

/**
 * The per-channel figures an hour row keeps, one integer column each ("<channel>_<metric>"):
 * c(reated) s(erved) n(o-show) x (cancelled) t(ransferred) w(aited) wm (wait ms).
 */
export const CHANNEL_METRICS = ["c", "s", "n", "x", "t", "w", "wm"] as const;
export type ChannelMetric = (typeof CHANNEL_METRICS)[number];
export const channelColumn = (channel: AnalyticsChannel, metric: ChannelMetric) => `${channel}_${metric}`;
export const CHANNEL_COLUMNS: readonly string[] = ANALYTICS_CHANNELS.flatMap((channel) =>
  CHANNEL_METRICS.map((metric) => channelColumn(channel, metric)),
);

/** A ticket's source is its channel; every source has its own channel name. */
export function channelOf(source: string): AnalyticsChannel {
  return (ANALYTICS_CHANNELS as readonly string[]).includes(source) ? (source as AnalyticsChannel) : "app";
}

// ---- duration histograms -------------------------------------------------------------------

const SECOND = 1000;

/**
 * Lower edges (ms) of the fixed buckets durations are counted in: 15 s wide up to 10 min, 1 min
 * up to 1 h, 5 min up to 3 h, 15 min up to 8 h, 1 h up to 24 h, then one open bucket.
 */
export const BUCKET_EDGES_MS: readonly number[] = (() => {
  const edges: number[] = [];
  const band = (from: number, to: number, width: number) => {
    for (let at = from; at < to; at += width) edges.push(at);
  };
  band(0, 10 * MINUTE, 15 * SECOND);
  band(10 * MINUTE, HOUR, MINUTE);
  band(HOUR, 3 * HOUR, 5 * MINUTE);
  band(3 * HOUR, 8 * HOUR, 15 * MINUTE);
  band(8 * HOUR, 24 * HOUR, HOUR);
  edges.push(24 * HOUR);
  return edges;
})();

/** The bucket a duration falls in (negative durations, from skewed clocks, count as 0). */
export function bucketOf(ms: number): number {
  const value = Math.max(0, ms);
  let lo = 0;
  let hi = BUCKET_EDGES_MS.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (BUCKET_EDGES_MS[mid]! <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** bucket index → count; sparse (absent = 0), as stored in the aggregate rows. */
export type Histogram = Record<string, number>;

export function mergeHistogram(into: Histogram, add: Histogram): void {
  // for…in, not Object.entries: this runs for every key of every hour row a summary reads.
  for (const bucket in add) into[bucket] = (into[bucket] ?? 0) + add[bucket]!;
}

/**
 * The p-quantile (0 < p ≤ 1, nearest rank: the smallest value with at least p·n values at or
 * below it) read from a histogram: the middle of the bucket holding that rank. The exact value
 * lies in that bucket, so the error is at most half its width (7.5 s under 10 min, 30 s under
 * 1 h, 2.5 min under 3 h, 7.5 min under 8 h, 30 min under 24 h); beyond 24 h the answer is 24 h,
 * a lower bound. null for an empty histogram.
 */
export function quantileMs(histogram: Histogram, p: number): number | null {
  const entries = Object.entries(histogram)
    .map(([bucket, n]) => [Number(bucket), n] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => a[0] - b[0]);
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const [bucket, n] of entries) {
    seen += n;
    if (seen >= rank) {
      const lo = BUCKET_EDGES_MS[bucket]!;
      const hi = BUCKET_EDGES_MS[bucket + 1];
      return hi === undefined ? lo : (lo + hi) / 2;
    }
  }
  return null;
}

// ---- a ticket's facts ----------------------------------------------------------------------

/** The fields of a ticket that analytics read (room row and D1 projection share these names). */
export interface TicketForAnalytics {
  id: string;
  status: string;
  source: string;
  called_at: number | null;
  serving_at: number | null;
  served_at: number | null;
  transferred_to_id: string | null;
  first_estimate_minutes: number | null;
  created_at: number;
  version: number;
}

export interface TicketFacts {
  ticketId: string;
  hourStart: number;
  channel: AnalyticsChannel;
  served: 0 | 1;
  noShow: 0 | 1;
  cancelled: 0 | 1;
  transferred: 0 | 1;
  waitMs: number | null;
  waitBucket: number | null;
  serviceMs: number | null;
  serviceBucket: number | null;
  estimateErrorMs: number | null;
  estimateErrorBucket: number | null;
  /** actual − promised, ms (positive: waited longer than promised). */
  estimateBiasMs: number | null;
  version: number;
}

export function hourStartOf(ms: number): number {
  return Math.floor(ms / HOUR) * HOUR;
}

/** What one ticket counts for, now (see the header for every definition). */
export function ticketFacts(t: TicketForAnalytics): TicketFacts {
  const waitMs = t.called_at === null ? null : Math.max(0, t.called_at - t.created_at);
  const serviceMs = t.status === "served" && t.serving_at !== null && t.served_at !== null ? Math.max(0, t.served_at - t.serving_at) : null;
  const promisedMs = t.first_estimate_minutes === null ? null : Math.round(t.first_estimate_minutes * MINUTE);
  const biasMs = waitMs !== null && promisedMs !== null ? waitMs - promisedMs : null;
  const errorMs = biasMs === null ? null : Math.abs(biasMs);
  const transferred = t.status === "cancelled" && t.transferred_to_id !== null;
  return {
    ticketId: t.id,
    hourStart: hourStartOf(t.created_at),
    channel: channelOf(t.source),
    served: t.status === "served" ? 1 : 0,
    noShow: t.status === "expired" || t.status === "skipped" ? 1 : 0,
    cancelled: t.status === "cancelled" && !transferred ? 1 : 0,
    transferred: transferred ? 1 : 0,
    waitMs,
    waitBucket: waitMs === null ? null : bucketOf(waitMs),
    serviceMs,
    serviceBucket: serviceMs === null ? null : bucketOf(serviceMs),
    estimateErrorMs: errorMs,
    estimateErrorBucket: errorMs === null ? null : bucketOf(errorMs),
    estimateBiasMs: biasMs,
    version: t.version,
  };
}

// ---- figures read back ---------------------------------------------------------------------

/** One aggregate row as read (or a sum of them). */
export interface AggregateFigures {
  created: number;
  served: number;
  noShow: number;
  cancelled: number;
  transferred: number;
  waited: number;
  waitMs: number;
  waitHist: Histogram;
  serviced: number;
  serviceMs: number;
  serviceHist: Histogram;
  estimated: number;
  estimateErrorMs: number;
  estimateBiasMs: number;
  estimateErrorHist: Histogram;
  /** channelColumn(channel, metric) → number (see CHANNEL_METRICS). */
  channels: Record<string, number>;
}

export function emptyFigures(): AggregateFigures {
  return {
    created: 0,
    served: 0,
    noShow: 0,
    cancelled: 0,
    transferred: 0,
    waited: 0,
    waitMs: 0,
    waitHist: {},
    serviced: 0,
    serviceMs: 0,
    serviceHist: {},
    estimated: 0,
    estimateErrorMs: 0,
    estimateBiasMs: 0,
    estimateErrorHist: {},
    channels: {},
  };
}

export function addFigures(into: AggregateFigures, add: AggregateFigures): void {
  into.created += add.created;
  into.served += add.served;
  into.noShow += add.noShow;
  into.cancelled += add.cancelled;
  into.transferred += add.transferred;
  into.waited += add.waited;
  into.waitMs += add.waitMs;
  into.serviced += add.serviced;
  into.serviceMs += add.serviceMs;
  into.estimated += add.estimated;
  into.estimateErrorMs += add.estimateErrorMs;
  into.estimateBiasMs += add.estimateBiasMs;
  mergeHistogram(into.waitHist, add.waitHist);
  mergeHistogram(into.serviceHist, add.serviceHist);
  mergeHistogram(into.estimateErrorHist, add.estimateErrorHist);
  mergeHistogram(into.channels, add.channels);
}

/** Minutes with two decimals (null stays null). */
export function minutesOf(ms: number | null): number | null {
  return ms === null ? null : Math.round((ms / MINUTE) * 100) / 100;
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}

export function durationStats(count: number, sumMs: number, hist: Histogram) {
  return {
    count,
    mean: count === 0 ? null : minutesOf(sumMs / count),
    p50: minutesOf(quantileMs(hist, 0.5)),
    p90: minutesOf(quantileMs(hist, 0.9)),
  };
}

/** The figures a summary shows for a set of rows. */
export function summaryFigures(f: AggregateFigures) {
  return {
    created: f.created,
    served: f.served,
    noShow: f.noShow,
    cancelled: f.cancelled,
    transferred: f.transferred,
    abandonmentRate: ratio(f.noShow + f.cancelled, f.served + f.noShow + f.cancelled),
    waitMinutes: durationStats(f.waited, f.waitMs, f.waitHist),
    serviceMinutes: durationStats(f.serviced, f.serviceMs, f.serviceHist),
  };
}

export function channelFigures(f: AggregateFigures) {
  return Object.fromEntries(
    ANALYTICS_CHANNELS.map((channel) => {
      const get = (metric: ChannelMetric) => f.channels[channelColumn(channel, metric)] ?? 0;
      const waited = get("w");
      return [
        channel,
        {
          created: get("c"),
          served: get("s"),
          noShow: get("n"),
          cancelled: get("x"),
          transferred: get("t"),
          meanWaitMinutes: waited === 0 ? null : minutesOf(get("wm") / waited),
        },
      ];
    }),
  ) as Record<
    AnalyticsChannel,
    { created: number; served: number; noShow: number; cancelled: number; transferred: number; meanWaitMinutes: number | null }
  >;
}

export function estimateFigures(f: AggregateFigures) {
  return {
    estimated: f.estimated,
    meanAbsoluteErrorMinutes: f.estimated === 0 ? null : minutesOf(f.estimateErrorMs / f.estimated),
    p50AbsoluteErrorMinutes: minutesOf(quantileMs(f.estimateErrorHist, 0.5)),
    p90AbsoluteErrorMinutes: minutesOf(quantileMs(f.estimateErrorHist, 0.9)),
    meanBiasMinutes: f.estimated === 0 ? null : minutesOf(f.estimateBiasMs / f.estimated),
  };
}

/** The columns of `analytics_ticket_facts` a ticket's facts fill, in the order of `factTuple` (the drain and the rebuild). */
export const FACT_COLUMNS = [
  "ticket_id",
  "hour_start",
  "channel",
  "served",
  "no_show",
  "cancelled",
  "transferred",
  "wait_ms",
  "wait_bucket",
  "service_ms",
  "service_bucket",
  "estimate_error_ms",
  "estimate_error_bucket",
  "estimate_bias_ms",
  "version",
] as const;

export function factTuple(f: TicketFacts): (string | number | null)[] {
  return [
    f.ticketId,
    f.hourStart,
    f.channel,
    f.served,
    f.noShow,
    f.cancelled,
    f.transferred,
    f.waitMs,
    f.waitBucket,
    f.serviceMs,
    f.serviceBucket,
    f.estimateErrorMs,
    f.estimateErrorBucket,
    f.estimateBiasMs,
    f.version,
  ];
}
