import { describe, expect, it } from "vitest";
import { maskPhone } from "../../src/domain/phone-mask";

describe("maskPhone", () => {
  it("keeps the country code, the first national digit and the last two, in the number's own grouping", () => {
    expect(maskPhone("+33612345678")).toBe("+33 6 •• •• •• 78");
    expect(maskPhone("+33 6 12 34 56 78")).toBe("+33 6 •• •• •• 78");
    expect(maskPhone("+12125551234")).toBe("+1 2•• ••• ••34");
    expect(maskPhone("+447700900123")).toBe("+44 7••• ••••23");
  });

  it("is null without a phone, and shows only the last two digits of a number no plan knows", () => {
    expect(maskPhone(null)).toBeNull();
    expect(maskPhone("")).toBeNull();
    expect(maskPhone("+999123456")).toBe("•••••••56");
  });
});
