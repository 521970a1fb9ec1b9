// The load side of the benchmark: a small JSON client for setup, autocannon runs bounded in
// time and count, and percentiles kept at sub-millisecond precision.
import { request } from "node:http";
import autocannon from "autocannon";

/** Every failure seen during the run: `npm run bench` exits non-zero when there is one. */
export const failures = [];

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/**
 * A JSON client for setup and sequential timing; anything but the expected status throws with
 * the answer. One connection per request: workerd resets a kept-alive connection whose
 * previous request kept the isolate busy for many seconds (bulk seeding does).
 */
export function client(base) {
  const once = sender(base);
  // Under `wrangler dev` a POST on a kept-alive connection the runtime dropped can answer 503 or
  // reset, and a loaded machine sometimes a 500 (a subrequest lost): a setup request is sent
  // again with the same Idempotency-Key, so it takes effect at most once.
  return async (method, path, options = {}) => {
    const key = method === "POST" ? `bench-${crypto.randomUUID()}` : undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await once(method, path, { ...options, idempotencyKey: key });
        return res;
      } catch (err) {
        // A 5xx is not kept by the idempotency layer, so the same key runs the request again.
        const retriable = err.status >= 500 || ["ECONNRESET", "EPIPE", "ECONNREFUSED"].includes(err.code);
        if (!retriable || attempt >= 4) throw err;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  };
}

function sender(base) {
  const { hostname, port } = new URL(base);
  return (method, path, { token, body, expect = [200, 201], idempotencyKey } = {}) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers = {};
      if (token) headers.Authorization = `Bearer ${token}`;
      if (idempotencyKey && path.startsWith("/v1/")) headers["Idempotency-Key"] = idempotencyKey;
      if (payload !== undefined) headers["Content-Type"] = "application/json";
      const req = request({ host: hostname, port, method, path, headers, agent: false, timeout: 120_000 }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => {
          let parsed = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text for the message
          }
          if (!expect.includes(res.statusCode)) {
            const err = new Error(
              `${method} ${path} answered ${res.statusCode}: ${String(typeof parsed === "string" ? parsed : JSON.stringify(parsed)).slice(0, 500)}`,
            );
            err.status = res.statusCode;
            reject(err);
          } else {
            resolve({ status: res.statusCode, body: parsed, data: parsed?.data });
          }
        });
      });
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer within 120 s`)));
      req.on("error", reject);
      req.end(payload);
    });
}

/**
 * One autocannon run: `connections` keep-alive connections for `duration` seconds, stopped
 * earlier after `amount` responses when given. Latencies are taken from every response (ms,
 * float); any non-2xx answer, socket error or timeout is recorded as a failure.
 */
export function load({ base, title, connections, duration, amount, method = "GET", path, token, body }) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const latencies = [];
  const statuses = {};
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let timer;
    const instance = autocannon(
      {
        url: `${base}${path}`,
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        connections,
        // With `amount` autocannon ignores `duration`; the timer below bounds it in time too.
        ...(amount ? { amount: Math.max(amount, connections) } : { duration }),
        timeout: 30,
      },
      (err, result) => {
        clearTimeout(timer);
        if (err) return reject(err);
        const elapsed = (performance.now() - started) / 1000;
        const failed = result.non2xx + result.errors + result.timeouts;
        if (failed > 0)
          failures.push(
            `${title}: ${result.non2xx} non-2xx ${JSON.stringify(statuses)}, ${result.errors} errors, ${result.timeouts} timeouts`,
          );
        resolve({ ...summarize(latencies), rps: latencies.length / elapsed, failed, elapsed });
      },
    );
    if (amount) timer = setTimeout(() => instance.stop(), duration * 1000);
    instance.on("response", (_client, status, _bytes, responseTime) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) latencies.push(responseTime);
    });
  });
}

/** Sequential requests, one at a time, timed from the client: for latency at a given queue size. */
export async function timeSequential(call, count, request) {
  const samples = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await request(call, i);
    samples.push(performance.now() - t);
  }
  return samples;
}
