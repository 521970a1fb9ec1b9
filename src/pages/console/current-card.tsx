// The current ticket's card: code and marks, status, name, service and queue, the wait, recalls,
// the masked phone, labels, note, the appointment's placement and the intake answers.
import type { Schemas } from "../shared/api";
import { minutes, staffLang, type PageLang } from "../shared/i18n";
import type { Ticket } from "./desk-view";
import type { ConsoleText } from "./i18n";
import { Marks } from "./marks";

type IntakeField = Schemas["IntakeField"];

/** The intake answers with their questions' labels in the clerk's language; a choice shows its option's label. */
function answersOf(tk: Ticket, fields: IntakeField[], t: ConsoleText, lang: PageLang) {
  return Object.entries(tk.intake ?? {}).map(([key, value]) => {
    const field = fields.find((f) => f.key === key);
    const option = field?.options?.find((o) => o.value === value);
    const shown =
      option !== undefined ? option.label[staffLang(lang)] : typeof value === "boolean" ? (value ? t.yes : t.no) : String(value);
    return { key, label: field?.label[staffLang(lang)] ?? key, shown };
  });
}

export function CurrentCard(p: {
  ticket: Ticket | null;
  t: ConsoleText;
  lang: PageLang;
  timeZone: string | undefined;
  where: string;
  questions: IntakeField[];
}) {
  const { ticket: tk, t, lang } = p;
  if (!tk) return <p class="muted">{t.noCurrent}</p>;
  const answers = answersOf(tk, p.questions, t, lang);
  return (
    <div class="ticket" data-ticket={tk.id}>
      <p class="code">
        {tk.displayCode}
        <Marks tk={tk} t={t} lang={lang} timeZone={p.timeZone} />
      </p>
      <dl>
        <dt>{t.status}</dt>
        <dd>{t.statusNames[tk.status]}</dd>
        {tk.visitorName && (
          <>
            <dt>{t.name}</dt>
            <dd>{tk.visitorName}</dd>
          </>
        )}
        <dt>{t.service}</dt>
        <dd>{p.where}</dd>
        {tk.leg && (
          <>
            <dt>{t.visitLeg}</dt>
            <dd class="leg">{t.legOf(tk.leg.index, tk.leg.of)}</dd>
          </>
        )}
        <dt>{t.waited}</dt>
        <dd>{minutes((Date.parse(tk.calledAt ?? tk.createdAt) - Date.parse(tk.createdAt)) / 60_000, lang)}</dd>
        <dt>{t.recalls}</dt>
        <dd>{tk.recallCount}</dd>
        {tk.phoneMasked && (
          <>
            <dt>{t.phone}</dt>
            <dd class="phone" translate="no">
              {tk.phoneMasked}
            </dd>
          </>
        )}
        {tk.labels.length > 0 && (
          <>
            <dt>{t.labels}</dt>
            <dd class="labels">
              {tk.labels.map((l) => (
                <span class="mark label">{l}</span>
              ))}
            </dd>
          </>
        )}
        {tk.note && (
          <>
            <dt>{t.note}</dt>
            <dd>{tk.note}</dd>
          </>
        )}
      </dl>
      {answers.length > 0 && (
        <section class="intake" aria-labelledby="intake-title">
          <h3 id="intake-title">{t.intake}</h3>
          <dl>
            {answers.map((a) => (
              <>
                <dt>{a.label}</dt>
                <dd data-intake={a.key}>{a.shown}</dd>
              </>
            ))}
          </dl>
        </section>
      )}
    </div>
  );
}
