// Addresses as networks hand them out (issue 44, docs/limits.md): an IPv4 subscriber gets one
// address (or shares it behind NAT), an IPv6 subscriber gets a whole /64 (RFC 6177; often a /56
// or /48), so one host can send from 2^64 addresses. Every per-address limit keys on what this
// answers: the IPv4 address itself, the IPv6 address's prefix (64 bits unless configured).

export const DEFAULT_IPV6_PREFIX_BITS = 64;

/** The configured prefix (IPV6_PREFIX_BITS, 32–128), else 64. */
export function ipv6PrefixBits(configured: string | undefined): number {
  const bits = Number(configured);
  return Number.isInteger(bits) && bits >= 32 && bits <= 128 ? bits : DEFAULT_IPV6_PREFIX_BITS;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function ipv4Of(text: string): string | null {
  const m = IPV4.exec(text);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts.join(".") : null;
}

/** The eight 16-bit groups of an IPv6 address, or null when it is not one. */
function ipv6Groups(text: string): number[] | null {
  let s = text
    .replace(/^\[|\]$/g, "")
    .replace(/%.*$/, "")
    .toLowerCase();
  // An embedded IPv4 tail (::ffff:192.0.2.1) becomes two groups.
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const v4 = ipv4Of(tail[2]!);
    if (!v4) return null;
    const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number];
    s = `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":"));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

/**
 * The key a client address is counted under: an IPv4 address as itself (also when written as an
 * IPv4-mapped IPv6 address), an IPv6 address as its network prefix ("2001:db8:1:2::/64"), and
 * anything else unchanged.
 */
export function addressKey(address: string, prefixBits: number = DEFAULT_IPV6_PREFIX_BITS): string {
  const text = address.trim();
  const v4 = ipv4Of(text);
  if (v4) return v4;
  const groups = ipv6Groups(text);
  if (!groups) return text;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join(".");
  }
  const masked = groups.map((g, i) => {
    const keep = Math.max(0, Math.min(16, prefixBits - i * 16));
    return keep === 0 ? 0 : g & ((0xffff << (16 - keep)) & 0xffff);
  });
  return `${masked.map((g) => g.toString(16)).join(":")}/${prefixBits}`;
}
