// The console's words, from the catalogue of languages (src/domain/languages, `staff.console`,
// docs/languages.md): every catalogue language, Arabic right to left. The catalogue holds texts with
// {variables}; this file turns the ones the views call with values into functions.
import { fillText, type StaffStrings } from "../../domain/languages/catalogue";
import { STAFF_LANGUAGES } from "../../domain/languages/staff.generated";
import type { Language as PageLang } from "../../domain/languages";

type Words = StaffStrings["console"];
type Filled =
  | "previousTitle"
  | "called"
  | "walkInAdded"
  | "markVip"
  | "markedVip"
  | "unmarkVip"
  | "unmarkedVip"
  | "legOf"
  | "appointmentAt"
  | "deferredUntil"
  | "checkInFor"
  | "checkedIn"
  | "readFailed"
  | "staffAlert"
  | "alertsFailed"
  | "alertsFailedKept"
  | "appointmentsFailed"
  | "moreWaiting"
  | "intakeBefore"
  | "intakeSaved";

export type ConsoleText = Omit<Words, Filled> & {
  previousTitle: (code: string) => string;
  called: (code: string, counter: string) => string;
  walkInAdded: (code: string) => string;
  markVip: (code: string) => string;
  markedVip: (code: string) => string;
  unmarkVip: (code: string) => string;
  unmarkedVip: (code: string) => string;
  legOf: (index: number, of: number) => string;
  appointmentAt: (time: string) => string;
  deferredUntil: (time: string) => string;
  checkInFor: (name: string, time: string) => string;
  checkedIn: (name: string, code: string) => string;
  readFailed: (why: string) => string;
  staffAlert: (code: string, waited: string) => string;
  alertsFailed: (why: string, kept: boolean) => string;
  appointmentsFailed: (why: string) => string;
  moreWaiting: (shown: number, total: number) => string;
  intakeBefore: (code: string) => string;
  intakeSaved: (code: string) => string;
};

/** An example number inside any text, kept left to right (U+2066 … U+2069) in Arabic. */
const EXAMPLE_PHONE = "\u2066+33 6 12 34 56 78\u2069";

function consoleText(w: Words): ConsoleText {
  const f = (text: string, values: Record<string, string | number>) => fillText(text, values);
  // The kept variant is said through alertsFailed(why, true).
  const { alertsFailedKept: _kept, ...plain } = w;
  return {
    ...plain,
    walkInPhoneHint: f(w.walkInPhoneHint, { example: EXAMPLE_PHONE }),
    noDesk: f(w.noDesk, { route: "POST /v1/locations/{id}/desks" }),
    previousTitle: (code) => f(w.previousTitle, { code }),
    called: (code, counter) => f(w.called, { code, counter }),
    walkInAdded: (code) => f(w.walkInAdded, { code }),
    markVip: (code) => f(w.markVip, { code }),
    markedVip: (code) => f(w.markedVip, { code }),
    unmarkVip: (code) => f(w.unmarkVip, { code }),
    unmarkedVip: (code) => f(w.unmarkedVip, { code }),
    legOf: (index, of) => f(w.legOf, { index, of }),
    appointmentAt: (time) => f(w.appointmentAt, { time }),
    deferredUntil: (time) => f(w.deferredUntil, { time }),
    checkInFor: (name, time) => f(w.checkInFor, { name, time }),
    checkedIn: (name, code) => f(w.checkedIn, { name, code }),
    readFailed: (why) => f(w.readFailed, { why }),
    staffAlert: (code, waited) => f(w.staffAlert, { code, waited }),
    alertsFailed: (why, kept) => f(kept ? w.alertsFailedKept : w.alertsFailed, { why }),
    appointmentsFailed: (why) => f(w.appointmentsFailed, { why }),
    moreWaiting: (shown, total) => f(w.moreWaiting, { shown, total }),
    intakeBefore: (code) => f(w.intakeBefore, { code }),
    intakeSaved: (code) => f(w.intakeSaved, { code }),
  };
}

const byLanguage = <T>(make: (staff: StaffStrings) => T) =>
  Object.fromEntries(Object.entries(STAFF_LANGUAGES).map(([code, l]) => [code, make(l.staff)])) as Record<PageLang, T>;

export const TEXT: Record<PageLang, ConsoleText> = byLanguage((s) => consoleText(s.console));

/** The API's refusals the clerk meets most, in the user's language (else the API's own message). */
export const REFUSALS: Record<PageLang, Record<string, string>> = byLanguage((s) => s.refusals);
