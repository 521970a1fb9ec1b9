// The `at_serve` questions (docs/visits.md): when start-serving or completion is refused with
// 409 INTAKE_REQUIRED, the console asks the missing ones here, saves them on the ticket
// (PATCH /v1/tickets/{ticketId}/intake) and the refused action is tried again.
import { useState } from "hono/jsx/dom";
import type { PageLang } from "../shared/i18n";
import { checkAnswers, IntakeInputs, readAnswers, type IntakeAnswers, type IntakeErrors, type IntakeField } from "../shared/intake";
import type { ConsoleText } from "./i18n";
import type { WalkInRefusal } from "./walk-in";

/** The missing keys of an INTAKE_REQUIRED refusal (`details.missing`, as `intake.<key>`). */
export function missingKeys(details: Record<string, unknown>): string[] {
  const named = Array.isArray(details.missing) ? details.missing : typeof details.field === "string" ? [details.field] : [];
  return named.map((f) => String(f).replace(/^intake\./, ""));
}

export function IntakeAsk(p: {
  t: ConsoleText;
  lang: PageLang;
  /** The questions still unanswered, asked here as required. */
  fields: IntakeField[];
  onCancel: () => void;
  onSubmit: (answers: IntakeAnswers) => Promise<WalkInRefusal>;
}) {
  const { t, lang } = p;
  // Asked now, so each must be answered (the form's rules read `at_join` as "required").
  const fields = p.fields.map((f) => ({ ...f, required: "at_join" as const }));
  const [errors, setErrors] = useState<IntakeErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (sending) return;
    const answers = readAnswers(e.target as HTMLFormElement, fields);
    const problems = checkAnswers(fields, answers, lang);
    setErrors(problems);
    setFormError(null);
    if (Object.keys(problems).length > 0) return;
    setSending(true);
    const refused = await p.onSubmit(answers);
    setSending(false);
    if (!refused) return;
    if (refused.field?.startsWith("intake.")) setErrors({ [refused.field.slice("intake.".length)]: refused.text });
    else setFormError(refused.text);
  };

  return (
    <form onSubmit={submit} noValidate data-intake-ask>
      <p>{t.intakeBeforeText}</p>
      <IntakeInputs fields={fields} lang={lang} errors={errors} idPrefix="serve-intake" />
      {formError && (
        <p class="notice error" role="alert">
          {formError}
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={p.onCancel}>
          {t.cancel}
        </button>
        <button class="primary" type="submit" disabled={sending}>
          {t.intakeSave}
        </button>
      </div>
    </form>
  );
}
