import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectOk, unique } from "../helpers/api";
import { bookAppointment } from "../helpers/booked-appointments";
import { testClock } from "../helpers/clock";
import { createOrganization, createQueueFixture, registerUser, type QueueFixture } from "../helpers/fixtures";

// The blend policy as a fast-check model driven over HTTP with the test clock (docs/blend.md):
// walk-ins arrive, appointments are checked in early, on time or late (and some too early, to be
// refused), the clock moves, staff call. At every call, against what the model knows:
//  - nobody is called twice or lost: the called ticket was waiting, the line is the model's;
//  - no walk-in past the cap waits while an appointment is called ahead of it;
//  - no appointment waits past (its time − appointmentsFirstFromMinutes) while a walk-in under
//    the cap is called: the documented bound is 0 minutes past its window's opening, so an
//    appointment is passed only by priority tickets, earlier appointments and walk-ins over the cap;
//  - every waiting ticket's placement.reason names its rule, in the ticket's language (any of the
//    catalogue's six: walk-ins and appointments are drawn in fr, en, es, pt, ar and nl).

const SEED = 3801;
const RUNS = 15;
const MIN = 60_000;
/** The service's default booking settings (docs/appointments.md). */
const OPENS = 30;
const GRACE = 10;

const LANGUAGES = ["fr", "en", "es", "pt", "ar", "nl"] as const;
type Lang = (typeof LANGUAGES)[number];

type Step =
  | { kind: "walkIn"; advance: number; language: Lang }
  | { kind: "appointment"; advance: number; startInMinutes: number; language: Lang }
  | { kind: "call"; advance: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("walkIn" as const),
      advance: fc.integer({ min: 0, max: 8 }),
      language: fc.constantFrom(...LANGUAGES),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("appointment" as const),
      advance: fc.integer({ min: 0, max: 8 }),
      // From 20 minutes ago (late: past the 10-minute grace) to 40 ahead (too early: check-in opens 30 before).
      startInMinutes: fc.integer({ min: -4, max: 8 }).map((k) => k * 5),
      language: fc.constantFrom(...LANGUAGES),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("call" as const), advance: fc.integer({ min: 0, max: 12 }) }) },
);

const scenarioArb = fc.record({
  appointmentsFirstFromMinutes: fc.constantFrom(0, 5, 10),
  walkInMaxWaitMinutes: fc.constantFrom(null, 10, 20, 30),
  steps: fc.array(stepArb, { minLength: 4, maxLength: 14 }),
});

interface Waiting {
  id: string;
  appointment: boolean;
  late: boolean;
  joinedAt: number;
  appointmentAt: number | null;
  language: Lang;
}

/**
 * Each rule's words in each language, written here from the catalogue's texts (src/domain/languages,
 * `placement`), not read from it. Arabic times and minutes may use Arabic-Indic digits: any text.
 */
const REASONS: Record<string, Record<Lang, RegExp>> = {
  walk_in_over_cap: {
    en: /^Walk-in waiting \d+ min, over the \d+ min cap/,
    fr: /^Sans rendez-vous, attend depuis \d+ min, au-delà du plafond de \d+ min/,
    es: /^Sin cita, esperando desde hace \d+ min, por encima del límite de \d+ min: antes que las citas$/,
    pt: /^Sem marcação, à espera há \d+ min, acima do limite de \d+ min: antes das marcações$/,
    ar: /^بدون موعد، ينتظر منذ .+ دقيقة، أكثر من الحد الأقصى .+ دقيقة: قبل المواعيد$/,
    nl: /^Zonder afspraak, wacht al \d+ min, boven de grens van \d+ min: vóór de afspraken$/,
  },
  appointment_due: {
    en: /^Appointment at \d\d:\d\d: ahead of walk-ins since/,
    fr: /^Rendez-vous de \d+ h \d\d : avant les personnes sans rendez-vous/,
    es: /^Cita de las .+: antes que las personas sin cita desde las .+$/,
    pt: /^Marcação das .+: antes das pessoas sem marcação desde as .+$/,
    ar: /^موعد الساعة .+: قبل الزوار بدون موعد منذ .+$/,
    nl: /^Afspraak om .+: vóór bezoekers zonder afspraak sinds .+$/,
  },
  appointment_early: {
    en: /^Appointment at \d\d:\d\d: early/,
    fr: /^Rendez-vous de \d+ h \d\d : en avance/,
    es: /^Cita de las .+: con antelación, pasa antes que las personas sin cita a las .+$/,
    pt: /^Marcação das .+: adiantada, passa antes das pessoas sem marcação às .+$/,
    ar: /^موعد الساعة .+: حضور مبكر، يتقدم على الزوار بدون موعد عند .+$/,
    nl: /^Afspraak om .+: vroeg, gaat om .+ vóór bezoekers zonder afspraak$/,
  },
  walk_in_arrival: {
    en: /^Walk-in(,| waiting \d+ min,) in order of arrival/,
    fr: /^Sans rendez-vous, (attend depuis \d+ min, )?par ordre d'arrivée/,
    es: /^Sin cita, (esperando desde hace \d+ min, )?por orden de llegada/,
    pt: /^Sem marcação, (à espera há \d+ min, )?por ordem de chegada/,
    ar: /^بدون موعد، (ينتظر منذ .+ دقيقة، )?حسب ترتيب الوصول/,
    nl: /^Zonder afspraak, (wacht al \d+ min, )?op volgorde van aankomst/,
  },
  late_appointment: {
    en: /^Late for the \d\d:\d\d appointment/,
    fr: /^En retard pour le rendez-vous de \d+ h \d\d/,
    es: /^Tarde para la cita de las .+: por orden de llegada, como sin cita$/,
    pt: /^Atrasado para a marcação das .+: por ordem de chegada, como sem marcação$/,
    ar: /^متأخر عن موعد الساعة .+: حسب ترتيب الوصول، كزائر بدون موعد$/,
    nl: /^Te laat voor de afspraak van .+: op volgorde van aankomst, als zonder afspraak$/,
  },
};

const exercised = {
  calls: 0,
  appointmentCalls: 0,
  overCapCalls: 0,
  tooEarly: 0,
  late: 0,
  empty: 0,
  checks: 0,
  /** The languages of the tickets the run made. */
  languages: new Set<string>(),
};

let clinic: QueueFixture;

beforeAll(async () => {
  const owner = await registerUser({ language: "en" });
  const org = await createOrganization(owner, { type: "healthcare" });
  clinic = await createQueueFixture(owner, org.id);
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

async function play(s: Scenario, base: number): Promise<void> {
  const token = clinic.owner.token;
  let at = base;
  testClock.set(at);
  // A service of its own per run: its one queue is where its appointments check in.
  const serviceId = expectOk(
    await call("POST", "/v1/services", {
      token,
      body: { name: unique("blend"), locationIds: [clinic.locationId], serviceTypeId: "st_other_general" },
      headers: { "X-Organization-Id": clinic.organizationId },
    }),
    201,
  ).id as string;
  const queueId = expectOk(await call("POST", "/v1/business/queues", { token, body: { serviceId, name: unique("blend") } }), 201)
    .id as string;
  const cap = s.walkInMaxWaitMinutes;
  const ahead = s.appointmentsFirstFromMinutes;
  expectOk(
    await call("PUT", `/v1/business/queues/${queueId}/blend`, {
      token,
      body: { appointmentsFirstFromMinutes: ahead, walkInMaxWaitMinutes: cap },
    }),
  );
  const waiting = new Map<string, Waiting>();
  const called = new Set<string>();
  const walkInLike = (w: Waiting) => !w.appointment || w.late;
  const overCap = (w: Waiting) => cap !== null && walkInLike(w) && at - w.joinedAt >= cap * MIN;
  const due = (w: Waiting) => w.appointment && !w.late && at >= w.appointmentAt! - ahead * MIN;

  for (const step of s.steps) {
    at += step.advance * MIN;
    testClock.set(at);
    if (step.kind === "walkIn") {
      const t = expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token, body: { language: step.language } }), 201);
      exercised.languages.add(step.language);
      waiting.set(t.id, {
        id: t.id,
        appointment: false,
        late: false,
        joinedAt: Date.parse(t.createdAt),
        appointmentAt: null,
        language: step.language,
      });
    } else if (step.kind === "appointment") {
      // Booked through the API: slots start on a 5-minute grid.
      const startAt = Math.floor(at / (5 * MIN)) * 5 * MIN + step.startInMinutes * MIN;
      const apt = await bookAppointment({
        auth: { token },
        serviceId,
        locationId: clinic.locationId,
        startAt,
        language: step.language,
      });
      const res = await call("POST", `/v1/appointments/${apt.id}/check-in`, { headers: { "X-Appointment-Token": apt.token } });
      if (at < startAt - OPENS * MIN) {
        expect(res.status, "check-in before its window").toBe(409);
        expect(res.body.error.code).toBe("CHECK_IN_NOT_OPEN");
        exercised.tooEarly += 1;
        continue;
      }
      const t = expectOk(res, 201).ticket;
      exercised.languages.add(step.language);
      const late = at > startAt + GRACE * MIN;
      if (late) exercised.late += 1;
      expect(t.kind).toBe("appointment");
      waiting.set(t.id, {
        id: t.id,
        appointment: true,
        late,
        joinedAt: Date.parse(t.createdAt),
        appointmentAt: startAt,
        language: step.language,
      });
    } else {
      const res = await call("POST", `/v1/queues/${queueId}/call-next`, { token });
      if (waiting.size === 0) {
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe("QUEUE_EMPTY");
        exercised.empty += 1;
      } else {
        const t = expectOk(res);
        const w = waiting.get(t.id);
        expect(w, `called ${t.id}: not waiting (called twice or unknown)`).toBeDefined();
        expect(called.has(t.id)).toBe(false);
        const others = [...waiting.values()].filter((o) => o.id !== t.id);
        if (!walkInLike(w!)) {
          exercised.appointmentCalls += 1;
          const passed = others.filter(overCap);
          expect(
            passed.map((o) => o.id),
            "walk-ins over the cap passed by an appointment",
          ).toEqual([]);
        } else {
          const passed = others.filter(due);
          if (passed.length > 0) {
            expect(overCap(w!), "a walk-in under the cap called while an appointment was due").toBe(true);
            exercised.overCapCalls += 1;
          }
        }
        waiting.delete(t.id);
        called.add(t.id);
        exercised.calls += 1;
      }
    }
    // The line as the API answers it is the model's, each ticket placed by the rule the model expects.
    const line = expectOk<any[]>(await call("GET", `/v1/queues/${queueId}/tickets?status=waiting&limit=100`, { token }));
    expect(line.map((t) => t.id).sort()).toEqual([...waiting.keys()].sort());
    for (const t of line) {
      const w = waiting.get(t.id)!;
      const expected = overCap(w)
        ? "walk_in_over_cap"
        : w.appointment && !w.late
          ? due(w)
            ? "appointment_due"
            : "appointment_early"
          : w.late
            ? "late_appointment"
            : "walk_in_arrival";
      expect(t.placement.rule, `placement of ${t.id}`).toBe(expected);
      // The rule's words in the ticket's own language.
      expect(t.placement.reason, `${t.id} in ${w.language}`).toMatch(REASONS[expected]![w.language]);
      exercised.checks += 1;
    }
  }
}

describe("the blend as a fast-check model over HTTP", () => {
  it("nobody lost or called twice, no walk-in over the cap passed by an appointment, no due appointment passed by a walk-in under it, every reason names its rule", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        run += 1;
        await play(s, Date.UTC(2026, 5, 1, 9) + run * 86_400_000);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(run).toBe(RUNS);
    expect(exercised.calls).toBeGreaterThan(10);
    expect(exercised.appointmentCalls).toBeGreaterThan(0);
    expect(exercised.tooEarly).toBeGreaterThan(0);
    expect(exercised.late).toBeGreaterThan(0);
    expect([...exercised.languages].sort()).toEqual([...LANGUAGES].sort());
    console.log(`blend model: ${RUNS} runs (seed ${SEED}): ${JSON.stringify({ ...exercised, languages: [...exercised.languages] })}`);
    // Like desks-model: many room calls per case, past the default 30 s when the machine is loaded.
  }, 300_000);
});
