import { describe, expect, it } from "vitest";
import { addressRefusal, hostNameRefusal, sameSite } from "../../src/domain/public-hosts";
import { retryDelaySeconds } from "../../src/domain/webhooks";
import { txtText } from "../../src/providers/doh";

describe("hostNameRefusal", () => {
  it.each(["example.com", "shop.example.co.uk", "xn--bcher-kva.de", "a-b.io", "1password.com"])("accepts the public name %s", (host) => {
    expect(hostNameRefusal(host)).toBeNull();
  });

  it.each([
    ["127.0.0.1", "IP address"],
    ["2130706433", "IP address"],
    ["0x7f000001", "IP address"],
    ["127.1", "IP address"],
    ["[::1]", "IP address"],
    ["::ffff:127.0.0.1", "IP address"],
    ["localhost", "localhost"],
    ["intranet", "single-label"],
    ["printer.local", ".local"],
    ["api.internal", ".internal"],
    ["x.localhost", ".localhost"],
    ["-bad.com", "not a valid"],
    ["under_score.com", "not a valid"],
    ["example.com:8443", "without scheme"],
    ["", "empty"],
  ])("refuses %s (%s)", (host, reason) => {
    expect(hostNameRefusal(host)).toContain(reason);
  });
});

describe("addressRefusal", () => {
  it.each(["93.184.216.34", "8.8.8.8", "2606:4700::1111", "2a00:1450:4007:80e::200e", "172.32.0.1", "100.128.0.1"])(
    "accepts the public address %s",
    (a) => {
      expect(addressRefusal(a)).toBeNull();
    },
  );

  it.each([
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["127.0.0.1", "loopback"],
    ["0.0.0.0", "this-network"],
    ["169.254.169.254", "metadata"],
    ["169.254.1.1", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["::ffff:127.0.0.1", "IPv4-mapped"],
    ["::ffff:7f00:1", "IPv4-mapped"],
    ["64:ff9b::10.0.0.1", "IPv4-mapped"],
    ["fd12:3456::1", "private"],
    ["fe80::1", "link-local"],
    ["ff02::1", "multicast"],
    ["fd00:ec2::254", "private"],
    ["not-an-ip", "not an IP"],
  ])("refuses %s (%s)", (a, reason) => {
    expect(addressRefusal(a)).toContain(reason);
  });
});

describe("addressRefusal: IPv6 transition and embedding prefixes (issue 26)", () => {
  // Each embeds an IPv4 address the packet ends up at: the embedded one is what is checked.
  it.each([
    ["2002:7f00:1::1", "6to4", "loopback"],
    ["2002:a00:1::", "6to4", "private"],
    ["2002:a9fe:a9fe::1", "6to4", "metadata"],
    // Teredo: server 65.54.227.120, client 127.0.0.1 stored inverted (0x80ff:0xfffe).
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo", "loopback"],
    ["2001:0:a00:1:8000:63bf:3fff:fdd2", "Teredo", "private"],
    ["::ffff:0:7f00:1", "SIIT", "loopback"],
    ["::ffff:0:127.0.0.1", "SIIT", "loopback"],
    ["::127.0.0.1", "IPv4-compatible", "loopback"],
    ["64:ff9b:1::a00:1", "NAT64", ""],
    ["64:ff9b::7f00:1", "NAT64", "loopback"],
    ["::ffff:169.254.169.254", "IPv4-mapped", "metadata"],
  ])("refuses %s (%s embedding a %s address)", (a, kind, reason) => {
    const refusal = addressRefusal(a);
    expect(refusal).toContain(kind);
    expect(refusal).toContain(reason);
  });

  it("lets 6to4 and Teredo addresses that embed public IPv4 addresses through", () => {
    expect(addressRefusal("2002:5db8:d70e::1")).toBeNull();
    expect(addressRefusal("2001:0:4136:e378:8000:63bf:a247:28f1")).toBeNull();
  });
});

describe("sameSite", () => {
  it("keeps redirects on the host, its subdomains and its www form", () => {
    expect(sameSite("shop.com", "www.shop.com")).toBe(true);
    expect(sameSite("www.shop.com", "shop.com")).toBe(true);
    expect(sameSite("shop.com", "cdn.shop.com")).toBe(true);
    expect(sameSite("shop.com", "evilshop.com")).toBe(false);
    expect(sameSite("shop.com", "shop.com.evil.net")).toBe(false);
  });
});

describe("txtText", () => {
  it("strips quotes and joins split strings", () => {
    expect(txtText('"service-verification=ab" "cd"')).toBe("service-verification=abcd");
    expect(txtText('"part1""part2"')).toBe("part1part2");
    expect(txtText("unquoted")).toBe("unquoted");
    expect(txtText('"with \\"escaped\\" quotes"')).toBe('with "escaped" quotes');
  });
});

describe("retryDelaySeconds", () => {
  it("doubles from 30 s up to an hour, within ±20 %", () => {
    expect(retryDelaySeconds(1, 0.5)).toBe(30);
    expect(retryDelaySeconds(2, 0.5)).toBe(60);
    expect(retryDelaySeconds(8, 0.5)).toBe(3600);
    expect(retryDelaySeconds(30, 0.5)).toBe(3600);
    expect(retryDelaySeconds(1, 0)).toBe(24);
    expect(retryDelaySeconds(1, 0.999)).toBe(36);
  });
});
