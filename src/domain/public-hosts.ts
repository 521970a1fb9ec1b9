// Which hosts and addresses the service may fetch on a customer's behalf (verification pages,
// webhook receivers). Pure rules; the outbound guard (src/providers/safe-fetch.ts) applies them.

/** Suffixes that never name a host on the public Internet (RFC 6761, 6762, 8375 and common LAN use). */
const INTERNAL_SUFFIXES = [
  "localhost",
  "local",
  "localdomain",
  "internal",
  "intranet",
  "lan",
  "home",
  "corp",
  "private",
  "test",
  "example",
  "invalid",
  "arpa",
  "onion",
];

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Why a host name may not be fetched, or null when it is a public DNS name. Expects lower case. */
export function hostNameRefusal(host: string): string | null {
  if (host.length === 0) return "empty host name";
  if (host.startsWith("[") || /^[0-9a-f:.]*:[0-9a-f:.]*$/.test(host)) return "IP address literals are not allowed";
  if (host.includes(":")) return "a host name only, without scheme, port or path";
  if (host.length > 253) return "host name longer than 253 characters";
  const labels = host.split(".");
  // Digits only in the last label: an IPv4 literal in any spelling (127.1, 2130706433, 0x7f.1 …).
  const last = labels[labels.length - 1]!;
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(last)) return "IP address literals are not allowed";
  if (labels.length < 2) return labels[0] === "localhost" ? "localhost is not allowed" : "single-label host names are not allowed";
  if (!labels.every((l) => LABEL.test(l))) return "not a valid host name";
  if (INTERNAL_SUFFIXES.includes(last)) return `.${last} names are not public`;
  if (labels.includes("localhost")) return "localhost is not allowed";
  return null;
}

/** A domain as typed by a customer, lower case and without a trailing dot. */
export function normalizeHost(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, "");
}

function ipv4Octets(address: string): number[] | null {
  const parts = address.split(".");
  if (parts.length !== 4) return null;
  const octets = parts.map((p) => (/^[0-9]{1,3}$/.test(p) ? Number(p) : NaN));
  return octets.every((o) => o >= 0 && o <= 255) ? octets : null;
}

/** IPv4 ranges that are not the public Internet (RFC 6890 and friends). */
function ipv4Refusal(o: number[]): string | null {
  const [a, b, c] = o as [number, number, number, number];
  if (a === 0) return "this-network address";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private address";
  if (a === 127) return "loopback address";
  if (a === 169 && b === 254) return c === 169 ? "cloud metadata address" : "link-local address";
  if (a === 100 && b >= 64 && b <= 127) return "carrier-grade NAT address";
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "reserved address";
  if (a === 198 && (b === 18 || b === 19)) return "benchmarking address";
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return "documentation address";
  if (a >= 224 && a <= 239) return "multicast address";
  if (a >= 240) return "reserved address";
  return null;
}

/** Expands an IPv6 address to 8 groups, with an embedded dotted IPv4 tail turned into 2 groups. */
function ipv6Groups(address: string): number[] | null {
  let text = address
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/%.*$/, "");
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const o = ipv4Octets(tail[1]!);
    if (!o) return null;
    text = text.slice(0, -tail[1]!.length) + `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  if (fill < 0) return null;
  const groups = [...head, ...new Array<number>(fill).fill(0), ...rest];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g)) ? groups : null;
}

const octetsOf = (hi: number, lo: number): number[] => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];

/**
 * Transition and embedding prefixes carry an IPv4 address the traffic ends up at (issue 26):
 * `always` ones only ever reach IPv4 hosts and are refused whatever they embed; 6to4 and Teredo
 * are ordinary routable IPv6 and are refused when an embedded IPv4 address is not public.
 */
function embeddedIpv4(g: number[]): { kind: string; always: boolean; v4: number[][] } | null {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const tail = octetsOf(g[6]!, g[7]!);
  if (zeros(0, 5) && g[5] === 0xffff) return { kind: "IPv4-mapped", always: true, v4: [tail] };
  if (zeros(0, 6)) return { kind: "IPv4-compatible", always: true, v4: [tail] };
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return { kind: "SIIT (IPv4-translated)", always: true, v4: [tail] };
  // 64:ff9b::/96 (well-known) and 64:ff9b:1::/48 (local use, RFC 8215), where the IPv4 address
  // may sit at any RFC 6052 offset: refused whole.
  if (g[0] === 0x64 && g[1] === 0xff9b) return { kind: "NAT64 (IPv4-mapped)", always: true, v4: zeros(2, 6) ? [tail] : [] };
  if (g[0] === 0x2002) return { kind: "6to4", always: false, v4: [octetsOf(g[1]!, g[2]!)] };
  // Teredo 2001:0::/32: the server's address, then the client's stored bit-inverted at the end.
  if (g[0] === 0x2001 && g[1] === 0) {
    return { kind: "Teredo", always: false, v4: [octetsOf(g[2]!, g[3]!), octetsOf(~g[6]! & 0xffff, ~g[7]! & 0xffff)] };
  }
  return null;
}

function ipv6Refusal(g: number[]): string | null {
  if (g.every((x) => x === 0)) return "unspecified address";
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback address";
  const embedded = embeddedIpv4(g);
  if (embedded) {
    for (const o of embedded.v4) {
      const refusal = ipv4Refusal(o);
      if (refusal) return `${embedded.kind} address embedding a ${refusal} (${o.join(".")})`;
    }
    if (embedded.always) return `${embedded.kind} address`;
  }
  if ((g[0]! & 0xfe00) === 0xfc00) return "private address";
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local address";
  if ((g[0]! & 0xffc0) === 0xfec0) return "site-local address";
  if ((g[0]! & 0xff00) === 0xff00) return "multicast address";
  if (g[0] === 0x2001 && g[1] === 0x0db8) return "documentation address";
  if (g[0] === 0xfd00 && g[1] === 0x0ec2) return "cloud metadata address";
  return null;
}

/** Why a resolved address may not be fetched, or null when it is a public unicast address. */
export function addressRefusal(address: string): string | null {
  const v4 = ipv4Octets(address);
  if (v4) return ipv4Refusal(v4);
  const v6 = ipv6Groups(address);
  if (v6) return ipv6Refusal(v6);
  return "not an IP address";
}

/**
 * A redirect stays on the domain when it goes to the same host, a subdomain of it, or between
 * the bare name and its `www.` form.
 */
export function sameSite(original: string, target: string): boolean {
  const bare = (h: string) => h.replace(/^www\./, "");
  const o = bare(original);
  const t = bare(target);
  return t === o || t.endsWith(`.${o}`);
}
