// The console's dialogs: complete (outcome, note), the previous call's fate, transfer (to a queue
// or a colleague), and the walk-in (./walk-in.tsx).
import { useEffect } from "hono/jsx/dom";
import type { Schemas, ServiceOutcome } from "../shared/api";
import type { PageLang } from "../shared/i18n";
import type { Ticket } from "./desk-view";
import type { ConsoleText } from "./i18n";
import type { IntakeAnswers } from "../shared/intake";
import { IntakeAsk } from "./intake-ask";
import { WalkInForm, type QueueChoice, type VisitorLanguages, type WalkIn, type WalkInRefusal } from "./walk-in";

type Member = Schemas["Member"];
type IntakeField = Schemas["IntakeField"];
export type Dialog =
  | null
  | { kind: "complete" }
  | { kind: "previous"; ticket: Ticket }
  | { kind: "transfer" }
  | { kind: "walkin" }
  /** at_serve questions the refused action needs (docs/visits.md); `retry` is that action. */
  | { kind: "intake"; ticket: Ticket; fields: IntakeField[]; retry: () => Promise<unknown> };

export function DialogView(p: {
  dialog: NonNullable<Dialog>;
  t: ConsoleText;
  current: Ticket | null;
  outcomes: ServiceOutcome[];
  queues: QueueChoice[];
  colleagues: Member[];
  deskQueues: QueueChoice[];
  /** The walk-in's language choice: the organization's offered languages, the branch's default first. */
  visitor: VisitorLanguages;
  onClose: () => void;
  onComplete: (outcome: string, note: string) => void;
  onPrevious: (ticket: Ticket, outcome: "served" | "absent") => void;
  onTransfer: (queueId: string, prioritize: boolean) => void;
  /** Null while the desk's services' questions are still being read. */
  questions: Record<string, IntakeField[]> | null;
  lang: PageLang;
  onWalkIn: (walkIn: WalkIn) => Promise<WalkInRefusal>;
  onIntake: (ticket: Ticket, answers: IntakeAnswers, retry: () => Promise<unknown>) => Promise<WalkInRefusal>;
}) {
  const { t, dialog } = p;
  useEffect(() => {
    const el = document.querySelector<HTMLElement>(".overlay [autofocus], .overlay select, .overlay input, .overlay button");
    el?.focus();
  }, [dialog.kind]);
  const cancel = (
    <button type="button" onClick={p.onClose}>
      {t.cancel}
    </button>
  );
  const form = (e: Event) => {
    e.preventDefault();
    return new FormData(e.target as HTMLFormElement);
  };
  let title = "";
  let body = null;
  if (dialog.kind === "complete") {
    title = `${t.confirmComplete} ${p.current?.displayCode ?? ""}`;
    body = (
      <form
        onSubmit={(e: Event) => {
          const f = form(e);
          p.onComplete(String(f.get("outcome") ?? ""), String(f.get("note") ?? "").trim());
        }}
      >
        <label>
          {t.outcome}
          <select name="outcome">
            <option value="">{t.noOutcome}</option>
            {p.outcomes.map((o) => (
              <option value={o.code}>{o.label}</option>
            ))}
          </select>
        </label>
        <label>
          {t.note}
          <textarea name="note" rows={2} maxLength={500} />
        </label>
        <div class="actions">
          {cancel}
          <button class="primary" type="submit">
            {t.confirmComplete}
          </button>
        </div>
      </form>
    );
  } else if (dialog.kind === "previous") {
    title = t.previousTitle(dialog.ticket.displayCode);
    body = (
      <>
        <p>{t.previousText}</p>
        <div class="actions">
          {cancel}
          <button type="button" onClick={() => p.onPrevious(dialog.ticket, "absent")}>
            {t.wasAbsent}
          </button>
          <button type="button" class="primary" onClick={() => p.onPrevious(dialog.ticket, "served")}>
            {t.wasServed}
          </button>
        </div>
      </>
    );
  } else if (dialog.kind === "transfer") {
    title = `${t.transfer} ${p.current?.displayCode ?? ""}`;
    body = (
      <form
        onSubmit={(e: Event) => {
          const f = form(e);
          p.onTransfer(String(f.get("queue")), f.get("prioritize") === "on");
        }}
      >
        <label>
          {t.transferTo}
          <select name="queue" required>
            {p.queues.length > 0 && (
              <optgroup label={t.queues}>
                {p.queues.map((q) => (
                  <option value={q.id}>{q.name}</option>
                ))}
              </optgroup>
            )}
            {p.colleagues.length > 0 && (
              <optgroup label={t.colleagues}>
                {p.colleagues.map((m) => (
                  <option value={m.userId}>{`${m.firstName} ${m.lastName}`}</option>
                ))}
              </optgroup>
            )}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" name="prioritize" /> {t.prioritize}
        </label>
        <div class="actions">
          {cancel}
          <button class="primary" type="submit" disabled={p.queues.length + p.colleagues.length === 0}>
            {t.confirmTransfer}
          </button>
        </div>
      </form>
    );
  } else if (dialog.kind === "intake") {
    title = t.intakeBefore(dialog.ticket.displayCode);
    body = (
      <IntakeAsk
        t={t}
        lang={p.lang}
        fields={dialog.fields}
        onCancel={p.onClose}
        onSubmit={(answers) => p.onIntake(dialog.ticket, answers, dialog.retry)}
      />
    );
  } else {
    title = t.walkIn;
    body = (
      <WalkInForm
        t={t}
        lang={p.lang}
        queues={p.deskQueues}
        visitor={p.visitor}
        questions={p.questions}
        onCancel={p.onClose}
        onSubmit={p.onWalkIn}
      />
    );
  }
  return (
    <div class="overlay" onClick={(e: Event) => e.target === e.currentTarget && p.onClose()}>
      <div role="dialog" aria-modal="true" aria-labelledby="dialog-title">
        <h2 id="dialog-title">{title}</h2>
        {body}
      </div>
    </div>
  );
}
