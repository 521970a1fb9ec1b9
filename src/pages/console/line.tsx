// The desk's line (waiting, in the desk's order, with each row's VIP button and an appointment's
// placement reason when a rule, not arrival, put it there) and the held tickets, as GET /v1/desks/{deskId}/console answers them.
import { minutes, since, type PageLang } from "../shared/i18n";
import type { DeskView, Ticket } from "./desk-view";
import type { ConsoleText } from "./i18n";
import { Marks } from "./marks";

export function WaitingLine(p: {
  view: DeskView;
  t: ConsoleText;
  lang: PageLang;
  clock: number;
  busy: boolean;
  onVip: (tk: Ticket, on: boolean) => void;
}) {
  const { view, t, lang } = p;
  const total = view.queues.reduce((n, q) => n + q.waitingCount, 0);
  const queueOf = (id: string) => view.queues.find((q) => q.id === id);
  const where = (tk: Ticket) => {
    const q = queueOf(tk.queueId);
    return view.queues.length > 1 ? `${q?.serviceName ?? ""} · ${q?.name ?? ""}` : (q?.serviceName ?? "");
  };
  return (
    <>
      <h2 id="line-title">
        {t.waiting} <span class="count">{total}</span>
      </h2>
      {view.waiting.length === 0 ? (
        <p class="muted">{t.nobodyWaiting}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t.code}</th>
              <th scope="col">{t.name}</th>
              <th scope="col">{t.service}</th>
              <th scope="col">{t.waited}</th>
              <th scope="col">
                <span class="sr-only">{t.actions}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {view.waiting.map((tk) => (
              <tr data-ticket={tk.id}>
                <td class="code-cell">
                  <span data-code="">{tk.displayCode}</span>
                  <Marks tk={tk} t={t} lang={lang} timeZone={view.location.timezone} />
                  {tk.placement && tk.placement.rule !== "walk_in_arrival" && tk.placement.rule !== "priority" && (
                    <span class="placement" data-placement={tk.placement.rule}>
                      {tk.placement.reason}
                    </span>
                  )}
                </td>
                <td>{tk.visitorName ?? "—"}</td>
                <td>{where(tk)}</td>
                <td>{minutes(since(tk.createdAt, p.clock), lang)}</td>
                <td class="row-actions">
                  {!tk.isPriority && (
                    <button
                      type="button"
                      class="small"
                      onClick={() => p.onVip(tk, true)}
                      disabled={p.busy}
                      aria-label={t.markVip(tk.displayCode)}
                    >
                      {t.vip}
                    </button>
                  )}
                  {tk.isPriority && tk.source !== "transfer" && (
                    <button
                      type="button"
                      class="small undo"
                      onClick={() => p.onVip(tk, false)}
                      disabled={p.busy}
                      aria-label={t.unmarkVip(tk.displayCode)}
                    >
                      {t.undoVip}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {view.waiting.length < total && <p class="muted small">{t.moreWaiting(view.waiting.length, total)}</p>}
    </>
  );
}

export function HeldList(p: { held: Ticket[]; t: ConsoleText; busy: boolean; onResume: (tk: Ticket) => void }) {
  const { t } = p;
  return (
    <>
      <h2 class="sub">
        {t.held} <span class="count">{p.held.length}</span>
      </h2>
      {p.held.length === 0 ? (
        <p class="muted">{t.nothingHeld}</p>
      ) : (
        <ul class="held">
          {p.held.map((tk) => (
            <li>
              <strong>{tk.displayCode}</strong> <span class="mark held">{t.held}</span> {tk.holdReason ?? ""}{" "}
              <button type="button" onClick={() => p.onResume(tk)} disabled={p.busy}>
                {t.resume} {tk.displayCode}
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
