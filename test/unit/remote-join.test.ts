import { describe, expect, it } from "vitest";
import { allowedRadiusKm, geofenceStatus, nextRemoteDeadline, penaltyUntil, remoteDeadlines } from "../../src/domain/remote-join";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

describe("allowedRadiusKm", () => {
  it("takes the service's radius, else the organization's, else 5 km", () => {
    expect(allowedRadiusKm(0.5, 10)).toBe(0.5);
    expect(allowedRadiusKm(null, 2)).toBe(2);
    expect(allowedRadiusKm(null, null)).toBe(5);
  });
});

describe("geofenceStatus", () => {
  it("is within when distance − accuracy ≤ radius", () => {
    expect(geofenceStatus(100, 0)).toBe("within_geofence");
    expect(geofenceStatus(100.5, 0)).toBe("travelling");
    expect(geofenceStatus(160, 60)).toBe("within_geofence");
    expect(geofenceStatus(300, 10, 500)).toBe("within_geofence");
  });
});

describe("remote deadlines", () => {
  const base = { status: "pending" as const, lastLocationAt: 0, warnedAt: null, reachedFrontAt: null };

  it("warns at 7 minutes, skips at 10, expires 30 minutes after the front", () => {
    expect(remoteDeadlines(base)).toEqual({ warning: 7 * MIN, autoSkip: 10 * MIN, expiry: null });
    expect(remoteDeadlines({ ...base, warnedAt: 7 * MIN, reachedFrontAt: 2 * MIN })).toEqual({
      warning: null,
      autoSkip: 10 * MIN,
      expiry: 32 * MIN,
    });
    expect(nextRemoteDeadline({ ...base, lastLocationAt: 40 * MIN, reachedFrontAt: 0 })).toBe(30 * MIN);
  });

  it("has none once arrived or ended", () => {
    for (const status of ["arrived", "expired", "cancelled"] as const) expect(nextRemoteDeadline({ ...base, status })).toBeNull();
  });
});

describe("penaltyUntil", () => {
  it("starts 24 hours at the third expiry within 7 days", () => {
    const expiries = [0, 2 * DAY, 6 * DAY];
    expect(penaltyUntil(expiries, 6 * DAY - 1)).toBeNull();
    expect(penaltyUntil(expiries, 6 * DAY)).toBe(7 * DAY);
    expect(penaltyUntil(expiries, 7 * DAY - 1)).toBe(7 * DAY);
    expect(penaltyUntil(expiries, 7 * DAY)).toBeNull();
  });

  it("needs the three within 7 days, in any order", () => {
    expect(penaltyUntil([8 * DAY, 0, 4 * DAY], 8 * DAY)).toBeNull();
    expect(penaltyUntil([7 * DAY, 0, 3 * DAY], 7 * DAY)).toBe(8 * DAY);
  });

  it("a fourth expiry in the window starts a new penalty", () => {
    expect(penaltyUntil([0, DAY, 2 * DAY, 4 * DAY], 4 * DAY + 1)).toBe(5 * DAY);
  });
});
