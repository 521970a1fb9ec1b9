// DNS over HTTPS, JSON flavour (Cloudflare's and Google's resolvers both speak it). The
// resolver is chosen by the operator (DOH_RESOLVER_URL), never by a customer, so it is called
// directly rather than through the outbound guard.

export const DEFAULT_DOH_RESOLVER = "https://cloudflare-dns.com/dns-query";
const TIMEOUT_MS = 5_000;

const RECORD_TYPES = { A: 1, CNAME: 5, TXT: 16, AAAA: 28 } as const;
export type RecordType = keyof typeof RECORD_TYPES;

export type DnsAnswer =
  | { status: "ok"; records: string[] }
  /** The name does not exist (NXDOMAIN) or has no record of that type. */
  | { status: "none" }
  /** The resolver failed or answered something unreadable: worth trying again later. */
  | { status: "error"; reason: string };

export async function resolve(resolverUrl: string | undefined, name: string, type: RecordType): Promise<DnsAnswer> {
  const url = new URL(resolverUrl || DEFAULT_DOH_RESOLVER);
  url.searchParams.set("name", name);
  url.searchParams.set("type", type);
  let body: { Status?: number; Answer?: { type: number; data: string }[] };
  try {
    const res = await fetch(url, { headers: { Accept: "application/dns-json" }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!res.ok) return { status: "error", reason: `the DNS resolver answered HTTP ${res.status}` };
    body = await res.json();
  } catch (err) {
    return { status: "error", reason: `the DNS resolver could not be reached (${err instanceof Error ? err.message : String(err)})` };
  }
  if (body.Status === 3) return { status: "none" };
  if (body.Status !== 0) return { status: "error", reason: `the DNS lookup failed (status ${body.Status})` };
  const records = (body.Answer ?? []).filter((a) => a.type === RECORD_TYPES[type]).map((a) => a.data);
  return records.length === 0 ? { status: "none" } : { status: "ok", records };
}

/**
 * A TXT record's text: resolvers quote it, and one over 255 bytes arrives as adjacent quoted
 * strings (`"part1" "part2"` or `"part1""part2"`), which are joined.
 */
export function txtText(data: string): string {
  const parts = [...data.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, "$1"));
  return parts.length > 0 ? parts.join("") : data;
}
