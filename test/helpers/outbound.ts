import { vi } from "vitest";

// The Internet as the service sees it in a test: every outbound fetch is intercepted here. DNS
// answers come from `dns` (DoH JSON, as cloudflare-dns.com speaks it), pages from `sites`
// (keyed by "https://host/path"). Anything else fails like an unreachable host. Every call is
// recorded, so a test can assert that a refused address was never fetched.

export interface DnsZone {
  A?: string[];
  AAAA?: string[];
  /** TXT `data` as a resolver gives it, quotes included (`"part1" "part2"`). */
  TXT?: string[];
}

export type SiteHandler = (request: Request) => Response | Promise<Response>;

export interface FakeInternet {
  /** Every URL fetched, in order. */
  calls: string[];
  /** The calls that were not DNS lookups. */
  pageCalls(): string[];
  dns: Record<string, DnsZone>;
  sites: Record<string, SiteHandler>;
}

const DOH_HOST = "cloudflare-dns.com";
const TYPES = { A: 1, AAAA: 28, TXT: 16 } as const;

export function fakeInternet(dns: Record<string, DnsZone> = {}, sites: Record<string, SiteHandler> = {}): FakeInternet {
  const net: FakeInternet = {
    calls: [],
    pageCalls: () => net.calls.filter((u) => new URL(u).hostname !== DOH_HOST),
    dns,
    sites,
  };
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    net.calls.push(request.url);
    const url = new URL(request.url);
    if (url.hostname === DOH_HOST) {
      const name = (url.searchParams.get("name") ?? "").toLowerCase();
      const type = url.searchParams.get("type") as keyof typeof TYPES;
      const zone = net.dns[name];
      if (!zone) return Response.json({ Status: 3 });
      const records = zone[type] ?? [];
      return Response.json({ Status: 0, Answer: records.map((data) => ({ name, type: TYPES[type], TTL: 60, data })) });
    }
    const handler = net.sites[`${url.origin}${url.pathname}`];
    if (!handler) throw new TypeError(`Network connection lost (no fake site for ${request.url})`);
    return handler(request);
  });
  return net;
}

/** An answer that arrives after `ms`, unless the request is aborted first. */
export function slowAnswer(ms: number, body = "late"): SiteHandler {
  return (request) =>
    new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(() => resolve(new Response(body)), ms);
      request.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new DOMException("The operation was aborted", "AbortError"));
      });
    });
}
