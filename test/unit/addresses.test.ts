import { describe, expect, it } from "vitest";
import { addressKey, ipv6PrefixBits } from "../../src/lib/addresses";

// Issue 44: per-address limits key IPv6 on its prefix (a subscriber's /64), IPv4 on the address.

describe("addressKey", () => {
  it("keeps an IPv4 address, also written IPv4-mapped", () => {
    expect(addressKey("198.51.100.7")).toBe("198.51.100.7");
    expect(addressKey("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(addressKey("::ffff:c633:6407")).toBe("198.51.100.7");
  });

  it("keys every address of one /64 alike, however written, and another /64 apart", () => {
    const key = addressKey("2001:db8:1:2::1");
    expect(key).toBe("2001:db8:1:2:0:0:0:0/64");
    for (const a of ["2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:0DB8:0001:0002:abcd::9", "[2001:db8:1:2::7]", "2001:db8:1:2::7%eth0"]) {
      expect(addressKey(a)).toBe(key);
    }
    expect(addressKey("2001:db8:1:3::1")).not.toBe(key);
  });

  it("follows the configured prefix", () => {
    expect(addressKey("2001:db8:1:2::1", 48)).toBe("2001:db8:1:0:0:0:0:0/48");
    expect(addressKey("2001:db8:1:2::1", 56)).toBe(addressKey("2001:db8:1:ff::1", 56));
    expect(addressKey("2001:db8:1:2::1", 128)).toBe("2001:db8:1:2:0:0:0:1/128");
    expect(ipv6PrefixBits(undefined)).toBe(64);
    expect(ipv6PrefixBits("56")).toBe(56);
    expect(ipv6PrefixBits("7")).toBe(64);
  });

  it("leaves what is no address as it is", () => {
    expect(addressKey("unknown")).toBe("unknown");
    expect(addressKey("1:2:3")).toBe("1:2:3");
  });
});
