import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { queueFixture, walkIn } from "../helpers/fixtures";

// Issue 44: the CONTRACT §10 text rules on every stored text, not only public names: intake
// question labels, option values and answers, staff messages (they reach a phone), outcome labels
// and completion notes refuse control characters (C1 included), bidi overrides and lone surrogates.

const UNSAFE = {
  "a right-to-left override": "abc\u202Egnp.exe",
  "a NUL": "Agence\u0000Centre",
  "a lone surrogate": "Caf\uD800e",
  "an isolate": "x\u2066y\u2069",
  "a C1 control (U+0085)": "a\u0085b",
};

describe("stored texts refuse the §10 characters (issue 44)", () => {
  it("on intake labels, option values and answers, staff messages, outcome labels and completion notes", async () => {
    const f = await queueFixture("pro");
    const token = f.owner.token;
    expectOk(
      await call("PUT", `/v1/services/${f.serviceId}/intake`, {
        token,
        body: { fields: [{ key: "account", label: { fr: "Compte", en: "Account" }, type: "text" }] },
      }),
    );
    const ticket = await walkIn({ token }, f.queueId);
    const field = (label: Record<string, string>, value = "passport") => ({
      fields: [{ key: "reason", label, type: "select", options: [{ value, label: { fr: "Passeport", en: "Passport" } }] }],
    });
    const cases: { method: string; path: string; body: (v: string) => unknown; what: string }[] = [
      { method: "PUT", path: `/v1/services/${f.serviceId}/intake`, body: (v) => field({ fr: v, en: "Reason" }), what: "intake label" },
      {
        method: "PUT",
        path: `/v1/services/${f.serviceId}/intake`,
        body: (v) => field({ fr: "Motif", en: "Reason" }, v),
        what: "intake option",
      },
      { method: "PATCH", path: `/v1/tickets/${ticket.id}/intake`, body: (v) => ({ answers: { account: v } }), what: "intake answer" },
      { method: "POST", path: `/v1/tickets/${ticket.id}/messages`, body: (v) => ({ text: v }), what: "staff message" },
      { method: "POST", path: `/v1/services/${f.serviceId}/outcomes`, body: (v) => ({ code: "done_x", label: v }), what: "outcome label" },
      { method: "POST", path: `/v1/tickets/${ticket.id}/complete`, body: (v) => ({ note: v }), what: "completion note" },
    ];
    for (const c of cases) {
      for (const [what, value] of Object.entries(UNSAFE)) {
        const res = await call(c.method, c.path, { token, body: c.body(value) });
        expect(res.status, `${c.what} with ${what}: ${JSON.stringify(res.body)}`).toBe(400);
        expectError(res, 400, "VALIDATION_ERROR");
      }
    }
    // Nothing was written: the questions are the first ones.
    const intake = expectOk(await call("GET", `/v1/services/${f.serviceId}/intake`, { token }));
    expect(intake.fields.map((q: any) => q.key)).toEqual(["account"]);
  });
});
