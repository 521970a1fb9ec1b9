// The one way the service fetches a URL chosen by a customer (domain verification, webhook
// deliveries). It must never become a way into our own network (SSRF): only https to a
// public DNS name whose addresses, looked up over DNS-over-HTTPS first, are all public;
// redirects re-checked and kept on the domain; bounded in time and size; nothing of ours sent.
import { addressRefusal, hostNameRefusal, normalizeHost, sameSite } from "../domain/public-hosts";
import { resolve } from "./doh";

export const OUTBOUND_TIMEOUT_MS = 5_000;
export const OUTBOUND_MAX_BYTES = 1024 * 1024;
export const OUTBOUND_MAX_REDIRECTS = 3;

export interface OutboundEnv {
  DOH_RESOLVER_URL?: string;
}

/** The destination is not allowed: nothing was sent to it. */
export class OutboundRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** The destination was allowed but the exchange failed (timeout, too large, network). */
export class OutboundFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** What a caller may relax: only a development Worker's webhooks reach a receiver on this machine. */
export interface OutboundOptions {
  /** http or https to 127.0.0.1, localhost or [::1] on any port (issue #41: ENVIRONMENT=development only). */
  loopback?: boolean;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** A loopback receiver that the options allow: nothing to resolve, nothing public to check. */
function allowedLoopback(url: URL, options: OutboundOptions): boolean {
  return (
    options.loopback === true &&
    (url.protocol === "http:" || url.protocol === "https:") &&
    LOOPBACK_HOSTS.has(normalizeHost(url.hostname)) &&
    !url.username &&
    !url.password
  );
}

/** Checks a URL's shape and host name without any network call. Throws OutboundRefusal. */
export function checkUrlShape(raw: string | URL, options: OutboundOptions = {}): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefusal("not a valid URL");
  }
  if (allowedLoopback(url, options)) return url;
  if (url.protocol !== "https:") throw new OutboundRefusal("only https URLs are allowed");
  if (url.username || url.password) throw new OutboundRefusal("credentials in the URL are not allowed");
  if (url.port !== "" && url.port !== "443") throw new OutboundRefusal("only the default https port (443) is allowed");
  const refusal = hostNameRefusal(normalizeHost(url.hostname));
  if (refusal) throw new OutboundRefusal(refusal);
  return url;
}

/**
 * Our resolver failed, so nothing is known of the host yet: not the customer's fault, and worth
 * trying again (a delivery retries; a subscription is stored and checked at each delivery).
 */
export class ResolverUnavailable extends OutboundFailure {}

/** Looks the host up (A and AAAA over DoH) and refuses it unless every address is public. */
export async function checkResolvedHost(env: OutboundEnv, host: string): Promise<void> {
  const answers = await Promise.all([resolve(env.DOH_RESOLVER_URL, host, "A"), resolve(env.DOH_RESOLVER_URL, host, "AAAA")]);
  const addresses = answers.flatMap((a) => (a.status === "ok" ? a.records : []));
  if (addresses.length === 0) {
    const failed = answers.find((a) => a.status === "error");
    if (failed && failed.status === "error") throw new ResolverUnavailable(`${host} could not be resolved: ${failed.reason}`);
    throw new OutboundRefusal(`${host} does not resolve`);
  }
  for (const address of addresses) {
    const refusal = addressRefusal(address);
    if (refusal) throw new OutboundRefusal(`${host} resolves to a ${refusal} (${address})`);
  }
}

/** Shape and addresses: what a customer-chosen URL must pass before it is stored or fetched. */
export async function checkDestination(env: OutboundEnv, raw: string | URL, options: OutboundOptions = {}): Promise<URL> {
  const url = checkUrlShape(raw, options);
  if (allowedLoopback(url, options)) return url;
  await checkResolvedHost(env, normalizeHost(url.hostname));
  return url;
}

export interface OutboundRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Follow up to 3 redirects on the same domain (GET only); otherwise a redirect is the answer. */
  followRedirects?: boolean;
  /** Read the body as text (at most 1 MiB); otherwise it is discarded unread. */
  readBody?: boolean;
  /** See OutboundOptions: a development webhook receiver on this machine. */
  loopback?: boolean;
}

export interface OutboundResponse {
  status: number;
  url: string;
  body: string | null;
  durationMs: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

async function readLimited(res: Response, signal: AbortSignal): Promise<string> {
  const declared = Number(res.headers.get("Content-Length") ?? "0");
  if (declared > OUTBOUND_MAX_BYTES) {
    await res.body?.cancel();
    throw new OutboundFailure("the answer is larger than 1 MiB");
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    if (signal.aborted) throw new OutboundFailure(`no complete answer within ${OUTBOUND_TIMEOUT_MS / 1000} s`);
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > OUTBOUND_MAX_BYTES) {
      await reader.cancel();
      throw new OutboundFailure("the answer is larger than 1 MiB");
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/**
 * Fetches a customer-chosen URL under every rule of the guard. Throws OutboundRefusal before
 * anything is sent to a refused destination (including a refused redirect target), and
 * OutboundFailure when the exchange itself fails. No cookie, credential or header of ours is
 * sent beyond `headers`; the whole exchange, redirects and body included, gets 5 s.
 */
export async function safeFetch(env: OutboundEnv, raw: string, request: OutboundRequest = {}): Promise<OutboundResponse> {
  const started = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), OUTBOUND_TIMEOUT_MS);
  const options: OutboundOptions = { loopback: request.loopback === true };
  const first = checkUrlShape(raw, options);
  const origin = normalizeHost(first.hostname);
  let url = first;
  try {
    for (let hop = 0; ; hop++) {
      if (!allowedLoopback(url, options)) await checkResolvedHost(env, normalizeHost(url.hostname));
      let res: Response;
      try {
        res = await fetch(url.toString(), {
          method: request.method ?? "GET",
          headers: request.headers ?? {},
          body: request.body,
          redirect: "manual",
          signal: controller.signal,
        });
      } catch (err) {
        if (controller.signal.aborted) throw new OutboundFailure(`no answer within ${OUTBOUND_TIMEOUT_MS / 1000} s`);
        throw new OutboundFailure(`the request failed (${err instanceof Error ? err.message : String(err)})`);
      }
      const location = res.headers.get("Location");
      if (request.followRedirects && REDIRECTS.has(res.status) && location) {
        await res.body?.cancel();
        if (hop >= OUTBOUND_MAX_REDIRECTS) throw new OutboundRefusal(`more than ${OUTBOUND_MAX_REDIRECTS} redirects`);
        let next: URL;
        try {
          next = checkUrlShape(new URL(location, url), options);
        } catch (err) {
          throw new OutboundRefusal(`redirect refused: ${(err as OutboundRefusal).reason ?? "not a valid URL"}`);
        }
        if (!sameSite(origin, normalizeHost(next.hostname)))
          throw new OutboundRefusal(`redirect off the domain refused (${next.hostname})`);
        url = next;
        continue;
      }
      let body: string | null = null;
      try {
        if (request.readBody) body = await readLimited(res, controller.signal);
        else await res.body?.cancel();
      } catch (err) {
        if (err instanceof OutboundFailure) throw err;
        if (controller.signal.aborted) throw new OutboundFailure(`no complete answer within ${OUTBOUND_TIMEOUT_MS / 1000} s`);
        throw new OutboundFailure(`the answer could not be read (${err instanceof Error ? err.message : String(err)})`);
      }
      return { status: res.status, url: url.toString(), body, durationMs: Date.now() - started };
    }
  } catch (err) {
    if (err instanceof OutboundRefusal && url !== first && !err.reason.startsWith("redirect")) {
      throw new OutboundRefusal(`redirect refused: ${err.reason}`);
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
