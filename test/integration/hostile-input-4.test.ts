import { describe, it } from "vitest";
import { hostileShard } from "../helpers/hostile";

// Part 4 of 4 of the hostile-input sweep over every documented operation (test/helpers/hostile.ts):
// split so each part has its own storage and the parts run in parallel.
describe("hostile input on every documented operation", () => {
  it("never answers 500, and answers errors in the envelope (part 4 of 4)", { timeout: 600_000 }, () => hostileShard(3, 4));
});
