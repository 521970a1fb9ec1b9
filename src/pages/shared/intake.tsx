// A service's join-time questions on a page (the kiosk, the console's walk-in): the inputs, the
// answers read from a form, and the check of them by the API's own rules (domain/intake.ts,
// bundled: the same function decides), with the refusal worded in the page's language.
import { checkJoinAnswers, type IntakeField as Field, type IntakeValue } from "../../domain/intake";
import type { Schemas } from "./api";
import { PAGE_LANGUAGES } from "../../domain/languages/pages.generated";
import { staffLang, type PageLang } from "./i18n";

export type IntakeField = Schemas["IntakeField"];
export type IntakeAnswers = Record<string, IntakeValue>;
/** The refused answers, by question key, in the page's language. */
export type IntakeErrors = Record<string, string>;

/** The refusals of an answer in the page's language (the catalogue's `intake`, every language). */
const wordsOf = (lang: PageLang) => PAGE_LANGUAGES[lang].intake;

/** The questions a visitor answers when taking a ticket (`at_serve` ones are the staff's, later). */
export function askedAtJoin(fields: readonly IntakeField[]): IntakeField[] {
  return fields.filter((f) => f.required !== "at_serve");
}

/** The words of a refused answer: `reason` as the API (or its rules here) gives it for `intake.<key>`. */
export function intakeIssueText(field: IntakeField | undefined, reason: string, lang: PageLang): string {
  const w = wordsOf(lang);
  if (!field) return w.required;
  if (field.type === "consent") return w.consent;
  if (reason.startsWith("is required")) return w.required;
  return w[field.type];
}

/** The answers the form holds: empty fields are left out, numbers are numbers, a ticked consent is true. */
export function readAnswers(form: HTMLFormElement, fields: readonly IntakeField[]): IntakeAnswers {
  const data = new FormData(form);
  const out: IntakeAnswers = {};
  for (const f of fields) {
    const name = `intake.${f.key}`;
    if (f.type === "consent") {
      if (data.get(name) === "yes") out[f.key] = true;
      continue;
    }
    const raw = String(data.get(name) ?? "").trim();
    if (raw === "") continue;
    if (f.type === "number") out[f.key] = Number(raw.replace(",", "."));
    else if (f.type === "phone") out[f.key] = raw.replace(/[\s.()-]/g, "");
    else out[f.key] = raw;
  }
  return out;
}

/** The API's check of the answers, its refusals in the page's language (empty: the join may go). */
export function checkAnswers(fields: readonly IntakeField[], answers: IntakeAnswers, lang: PageLang): IntakeErrors {
  const checked = checkJoinAnswers(fields as Field[], answers);
  if (checked.ok) return {};
  const errors: IntakeErrors = {};
  for (const issue of checked.issues) {
    const key = issue.field.slice("intake.".length);
    errors[key] ??= intakeIssueText(
      fields.find((f) => f.key === key),
      issue.reason,
      lang,
    );
  }
  return errors;
}

/**
 * One input per question, labelled in the page's language, with its refusal under it. The business
 * writes its questions in French and English: in another language they show in English, while the
 * page's own words (optional, the refusals) are the page's language's.
 */
export function IntakeInputs(p: { fields: readonly IntakeField[]; lang: PageLang; errors: IntakeErrors; idPrefix: string }) {
  const w = wordsOf(p.lang);
  const written = staffLang(p.lang);
  return (
    <>
      {p.fields.map((f) => {
        const name = `intake.${f.key}`;
        const id = `${p.idPrefix}-${f.key}`;
        const error = p.errors[f.key];
        const errorId = `${id}-error`;
        const label = `${f.label[written]}${f.required === "at_join" ? "" : ` ${w.optional}`}`;
        const shared = {
          name,
          "aria-invalid": error ? "true" : undefined,
          "aria-describedby": error ? errorId : undefined,
          "aria-required": f.required === "at_join" ? "true" : undefined,
        };
        const problem = error ? (
          <span class="field-error" id={errorId}>
            {error}
          </span>
        ) : null;
        if (f.type === "select")
          return (
            <fieldset class="intake-choice" data-question={f.key} {...(error ? { "aria-describedby": errorId } : {})}>
              <legend>{label}</legend>
              <div class="choices">
                {(f.options ?? []).map((o) => (
                  <label class="choice">
                    <input type="radio" name={name} value={o.value} />
                    <span>{o.label[written]}</span>
                  </label>
                ))}
              </div>
              {problem}
            </fieldset>
          );
        if (f.type === "consent")
          return (
            <div class="intake-consent" data-question={f.key}>
              <label class="check">
                <input type="checkbox" value="yes" {...shared} /> {label}
              </label>
              {problem}
            </div>
          );
        const type = { text: "text", number: "text", date: "date", phone: "tel", email: "email" }[f.type];
        const inputMode = { text: "text", number: "decimal", date: undefined, phone: "tel", email: "email" }[f.type];
        return (
          <label data-question={f.key}>
            {label}
            <input type={type} inputMode={inputMode} autocomplete="off" maxLength={f.type === "text" ? 500 : undefined} {...shared} />
            {problem}
          </label>
        );
      })}
    </>
  );
}
