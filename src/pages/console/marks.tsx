// A ticket's marks beside its code: VIP (created so or marked at the counter), priority (a transfer
// sent to the front), appointment with its time on the branch's clock, and a deferred ticket's return time.
import { languageMeta, type PageLang } from "../shared/i18n";
import type { Ticket } from "./desk-view";
import type { ConsoleText } from "./i18n";

/** "10:30" on the branch's clock. */
export function clockTime(iso: string, lang: PageLang, timeZone: string | undefined): string {
  return new Intl.DateTimeFormat(languageMeta(lang).locale, { hour: "2-digit", minute: "2-digit", timeZone }).format(new Date(iso));
}

export function Marks({ tk, t, lang, timeZone }: { tk: Ticket; t: ConsoleText; lang: PageLang; timeZone?: string }) {
  return (
    <>
      {tk.isPriority && tk.source !== "transfer" && <span class="mark vip">{t.vip}</span>}
      {tk.isPriority && tk.source === "transfer" && <span class="mark vip">{t.priority}</span>}
      {tk.kind === "appointment" && (
        <span class="mark appointment" data-mark="appointment">
          {tk.appointmentAt ? t.appointmentAt(clockTime(tk.appointmentAt, lang, timeZone)) : t.appointment}
        </span>
      )}
      {tk.deferredUntil && (
        <span class="mark deferred" data-mark="deferred">
          {t.deferredUntil(clockTime(tk.deferredUntil, lang, timeZone))}
        </span>
      )}
    </>
  );
}
