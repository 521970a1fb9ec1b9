import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundingBox, destination, distanceKm, inBox } from "../../src/domain/geo";

const PARIS = { latitude: 48.8566, longitude: 2.3522 };
const LONDON = { latitude: 51.5074, longitude: -0.1278 };

describe("distanceKm", () => {
  it("matches known distances", () => {
    expect(distanceKm(PARIS, LONDON)).toBeCloseTo(343.5, 0);
    expect(distanceKm(PARIS, PARIS)).toBe(0);
    // One degree of latitude is about 111.2 km everywhere.
    expect(distanceKm({ latitude: 0, longitude: 0 }, { latitude: 1, longitude: 0 })).toBeCloseTo(111.195, 2);
  });

  it("is short across the antimeridian", () => {
    expect(distanceKm({ latitude: 0, longitude: 179.9 }, { latitude: 0, longitude: -179.9 })).toBeCloseTo(22.24, 1);
  });
});

describe("boundingBox", () => {
  it("is one longitude range (given twice) away from the antimeridian and the poles", () => {
    const box = boundingBox(PARIS, 10);
    expect(box.longitudeRanges[0]).toEqual(box.longitudeRanges[1]);
    expect(box.maxLatitude - box.minLatitude).toBeCloseTo((2 * 10) / 111.195, 3);
    expect(inBox(box, PARIS)).toBe(true);
    expect(inBox(box, LONDON)).toBe(false);
  });

  it("splits the longitudes in two across the antimeridian", () => {
    const east = boundingBox({ latitude: -17, longitude: 179.95 }, 20);
    expect(east.longitudeRanges[0][1]).toBe(180);
    expect(east.longitudeRanges[1][0]).toBe(-180);
    expect(inBox(east, { latitude: -17, longitude: -179.95 })).toBe(true);
    expect(inBox(east, { latitude: -17, longitude: 0 })).toBe(false);
    const west = boundingBox({ latitude: 65, longitude: -179.9 }, 50);
    expect(inBox(west, { latitude: 65, longitude: 179.8 })).toBe(true);
  });

  it("covers every longitude when the circle reaches a pole", () => {
    const box = boundingBox({ latitude: 89.9, longitude: 10 }, 50);
    expect(box.maxLatitude).toBe(90);
    expect(box.longitudeRanges).toEqual([
      [-180, 180],
      [-180, 180],
    ]);
    expect(inBox(box, { latitude: 89.95, longitude: -170 })).toBe(true);
  });

  it("contains every point within the radius, anywhere on Earth", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -90, max: 90, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: 0.001, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 360, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (latitude, longitude, radius, bearing, fraction) => {
          const center = { latitude, longitude };
          const point = destination(center, bearing, radius * fraction);
          fc.pre(distanceKm(center, point) <= radius);
          expect(inBox(boundingBox(center, radius), point)).toBe(true);
        },
      ),
      { numRuns: 5000 },
    );
  });
});
