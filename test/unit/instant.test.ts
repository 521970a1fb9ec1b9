import { describe, expect, it } from "vitest";
import { parseInstantInput, utcInstant } from "../../src/lib/instant";

describe("parseInstantInput", () => {
  it.each([
    ["2026-03-20T10:30:00Z", "2026-03-20T10:30:00.000Z"],
    ["2026-03-20T10:30:00.5Z", "2026-03-20T10:30:00.500Z"],
    ["2026-03-20T10:30Z", "2026-03-20T10:30:00.000Z"],
    ["2026-03-20T10:30:00+01:00", "2026-03-20T09:30:00.000Z"],
    ["2026-03-20T10:30:00-0530", "2026-03-20T16:00:00.000Z"],
    ["2026-03-20", "2026-03-20T00:00:00.000Z"],
  ])("reads %s", (text, expected) => {
    const parsed = parseInstantInput(text);
    expect(parsed).not.toBeNull();
    expect(new Date(utcInstant(parsed!)).toISOString()).toBe(expected);
  });

  it("keeps a bare date as a date", () => {
    expect(parseInstantInput("2028-02-29")).toEqual({ kind: "date", year: 2028, month: 2, day: 29 });
  });

  it.each([
    "2026-02-29",
    "2026-13-01",
    "2026-03-20T24:00:00Z",
    "2026-03-20T10:60Z",
    "2026-03-20T10:30:00",
    "2026-03-20T10:30:00+15:00",
    "1969-12-31",
    "20260320",
    "tomorrow",
    "",
  ])("refuses %j", (text) => expect(parseInstantInput(text)).toBeNull());
});
