import { describe, expect, it } from "vitest";
import { csvField, csvRecord } from "../../src/domain/csv";

// Formula injection under other delimiters (issue 26): French and German Excel split a CSV line
// on `;`, so a cell can start in the middle of one of our fields. Every place a spreadsheet
// might start a cell must not start with = + - @ (or a tab/CR).

/** The cells a spreadsheet splitting on `delimiter` would read from this line (quotes ignored, as Excel does mid-field). */
function cellsSplitOn(line: string, delimiter: string): string[] {
  return line.replace(/\r\n$/, "").split(delimiter);
}

const FORMULA = /^\s*[=+\-@\t\r]/;

describe("csvField", () => {
  it("leaves no cell starting a formula whichever delimiter the spreadsheet splits on", () => {
    const line = csvRecord(["tkt_1", "Jean;=cmd|' /C calc'!A0", 3]);
    for (const delimiter of [",", ";", "\t", "|"]) {
      for (const cell of cellsSplitOn(line, delimiter)) expect(cell, `split on ${JSON.stringify(delimiter)}`).not.toMatch(FORMULA);
    }
    // Quoted as one field for a reader that honours quotes, and readable.
    expect(csvField("Jean;=cmd|' /C calc'!A0")).toBe(`"Jean;'=cmd|' /C calc'!A0"`);
  });

  it.each([
    ["Jean;=1+1", `"Jean;'=1+1"`],
    ["a;+1", `"a;'+1"`],
    ["a; -1", `"a;' -1"`],
    ["a|@SUM(1)", `"a|'@SUM(1)"`],
    ["a\t=1", `"a\t'=1"`],
    ["plain; text", `"plain; text"`],
    ["=1+1", `'=1+1`],
    ["Zoë", "Zoë"],
  ])("writes %j as %j", (value, written) => {
    expect(csvField(value)).toBe(written);
  });

  it("keeps numbers and booleans as they are", () => {
    expect(csvRecord([-2, true, null, "x"])).toBe("-2,true,,x\r\n");
  });
});
