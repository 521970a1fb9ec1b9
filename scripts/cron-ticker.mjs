// Local cron for `npm run dev`: wrangler dev never fires the Worker's cron trigger by itself,
// but with `--test-scheduled` it runs the scheduled handler on GET /__scheduled. This ticker
// calls it once a minute (as the deployed `* * * * *` trigger does) so no-shows, remote-join
// expiries and reminders happen on a laptop. It waits until wrangler answers, logs one line
// when it starts and one per change between working and failing (never once per tick), and
// its timers never keep the process alive.

const CRON = "* * * * *";
const MINUTE_MS = 60_000;
const RETRY_MS = 2_000;

/** Starts ticking against `base` (e.g. http://127.0.0.1:8787); returns a function that stops it. */
export function startCronTicker(base, { log = console.log, intervalMs = MINUTE_MS } = {}) {
  const url = `${base}/__scheduled?cron=${encodeURIComponent(CRON).replaceAll("%20", "+")}`;
  let timer = null;
  let stopped = false;
  let started = false;
  let failing = false;

  async function fire() {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return true;
    } catch (err) {
      return err;
    }
  }

  function schedule(ms) {
    if (stopped) return;
    timer = setTimeout(tick, ms);
    timer.unref?.();
  }

  async function tick() {
    const result = await fire();
    if (!started) {
      // Still booting: try again soon, quietly.
      if (result !== true) return schedule(RETRY_MS);
      started = true;
      log(`Local cron: the scheduled handler runs every minute (GET ${url}).`);
      return schedule(intervalMs);
    }
    if (result !== true && !failing) log(`Local cron: the scheduled run failed (${result.message ?? result}); retrying every minute.`);
    if (result === true && failing) log("Local cron: the scheduled run works again.");
    failing = result !== true;
    schedule(intervalMs);
  }

  schedule(RETRY_MS);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
