// Great-circle distances and the latitude/longitude box that contains a radius, so a nearby
// search can ask the (latitude, longitude) index for candidates before measuring them.

/** Mean Earth radius (IUGG), in kilometres. */
export const EARTH_RADIUS_KM = 6371.0088;

export interface Point {
  latitude: number;
  longitude: number;
}

const toRadians = (deg: number) => (deg * Math.PI) / 180;
const toDegrees = (rad: number) => (rad * 180) / Math.PI;

/** Haversine distance in kilometres: accurate at every scale, stable for short distances. */
export function distanceKm(a: Point, b: Point): number {
  const dLat = toRadians(b.latitude - a.latitude);
  const dLon = toRadians(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(toRadians(a.latitude)) * Math.cos(toRadians(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

export type LongitudeRange = readonly [min: number, max: number];

/**
 * Every point within the radius lies inside: latitude in [minLatitude, maxLatitude] and
 * longitude in either range. There are always two ranges (the same one twice when the box
 * does not cross the antimeridian), so the SQL that uses them has a single shape.
 */
export interface BoundingBox {
  minLatitude: number;
  maxLatitude: number;
  longitudeRanges: readonly [LongitudeRange, LongitudeRange];
}

// Rounding in the trigonometry must never drop a point on the edge; the exact distance
// filter that follows removes what the margin lets in.
const MARGIN_DEG = 1e-6;

/**
 * The smallest latitude/longitude box around a circle on the sphere (J. P. Matuschek's
 * method). Near a pole the circle covers every longitude; across the antimeridian the
 * longitude span is split in two.
 */
export function boundingBox(center: Point, radiusKm: number): BoundingBox {
  const angular = radiusKm / EARTH_RADIUS_KM;
  const dLat = toDegrees(angular);
  const minLatitude = center.latitude - dLat - MARGIN_DEG;
  const maxLatitude = center.latitude + dLat + MARGIN_DEG;
  const everyLongitude: BoundingBox["longitudeRanges"] = [
    [-180, 180],
    [-180, 180],
  ];
  if (maxLatitude >= 90 || minLatitude <= -90) {
    return { minLatitude: Math.max(minLatitude, -90), maxLatitude: Math.min(maxLatitude, 90), longitudeRanges: everyLongitude };
  }
  const dLon = toDegrees(Math.asin(Math.sin(angular) / Math.cos(toRadians(center.latitude)))) + MARGIN_DEG;
  if (dLon >= 180) return { minLatitude, maxLatitude, longitudeRanges: everyLongitude };
  const west = center.longitude - dLon;
  const east = center.longitude + dLon;
  let longitudeRanges: BoundingBox["longitudeRanges"];
  if (west < -180) {
    longitudeRanges = [
      [west + 360, 180],
      [-180, east],
    ];
  } else if (east > 180) {
    longitudeRanges = [
      [west, 180],
      [-180, east - 360],
    ];
  } else {
    longitudeRanges = [
      [west, east],
      [west, east],
    ];
  }
  return { minLatitude, maxLatitude, longitudeRanges };
}

export function inBox(box: BoundingBox, p: Point): boolean {
  return (
    p.latitude >= box.minLatitude &&
    p.latitude <= box.maxLatitude &&
    box.longitudeRanges.some(([min, max]) => p.longitude >= min && p.longitude <= max)
  );
}

/** The point `distance` km from `from` along `bearingDeg` (0 = north): for tests and fixtures. */
export function destination(from: Point, bearingDeg: number, distance: number): Point {
  const angular = distance / EARTH_RADIUS_KM;
  const bearing = toRadians(bearingDeg);
  const lat1 = toRadians(from.latitude);
  const lon1 = toRadians(from.longitude);
  const lat2 = Math.asin(Math.sin(lat1) * Math.cos(angular) + Math.cos(lat1) * Math.sin(angular) * Math.cos(bearing));
  const lon2 =
    lon1 + Math.atan2(Math.sin(bearing) * Math.sin(angular) * Math.cos(lat1), Math.cos(angular) - Math.sin(lat1) * Math.sin(lat2));
  const longitude = ((toDegrees(lon2) + 540) % 360) - 180;
  return { latitude: toDegrees(lat2), longitude };
}
