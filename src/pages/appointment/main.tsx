// The customer's appointment page (/appointments/{id}#token=…), the manage link of the
// confirmation (src/appointments/announcements.ts): the token stays in the fragment and in this
// browser's storage. Shows the appointment and its check-in code, checks it in once check-in is
// open ("check-in opens at …" before), then links to the ticket's status page; cancels after a
// confirmation; moves it to another free slot (GET /v1/appointments/{id}/slots with the token,
// then PATCH). Its words are the catalogue's (src/domain/languages, `pages.appointment`).
import { render, useEffect, useLayoutEffect, useState } from "hono/jsx/dom";
import "../shared/base.css";
import "../status/status.css";
import { api, ApiRefusal, type Schemas } from "../shared/api";
import { langChosen, languageMeta, pageWords, rememberLang, say, showLang, visitorLang, type PageLang } from "../shared/i18n";
import { LanguageSwitch } from "../shared/language-switch";
import { checkInRefusal } from "../shared/refusals";

type Appointment = Schemas["AppointmentDetail"];
type CheckInAnswer = Schemas["AppointmentCheckIn"];
type RescheduleSlot = Schemas["RescheduleSlot"];

const appointmentId = decodeURIComponent(location.pathname.split("/")[2] ?? "");
const storageKey = `pages:appointment:${appointmentId}`;
const ticketKey = `pages:appointment-ticket:${appointmentId}`;
const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? localStorage.getItem(storageKey) ?? "";
if (token) localStorage.setItem(storageKey, token);
const headers = { "X-Appointment-Token": token };

function when(iso: string, zone: string, lang: PageLang, withDate: boolean): string {
  const f = new Intl.DateTimeFormat(languageMeta(lang).locale, {
    timeZone: zone,
    ...(withDate ? { weekday: "long", day: "numeric", month: "long" } : {}),
    hour: "2-digit",
    minute: "2-digit",
  }).format(new Date(iso));
  return lang === "fr" ? f.replace(/(\d\d):(\d\d)/, "$1 h $2") : f;
}

/** The local date (YYYY-MM-DD) of an instant where the location is. */
const localDate = (iso: string, zone: string) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(iso));

function nextDate(date: string): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

/** How many days from today the day list offers (the slots route refuses past the service's horizon). */
const DAYS_OFFERED = 60;

/**
 * The days to choose from, from today where the location is, each named in the page's language
 * ("lundi 23 mars"). Not a native date field: its format follows the browser's locale, so a
 * French page showed mm/dd/yyyy.
 */
function dayChoices(today: string, lang: PageLang, also: string): { value: string; label: string }[] {
  const name = new Intl.DateTimeFormat(languageMeta(lang).locale, { timeZone: "UTC", weekday: "long", day: "numeric", month: "long" });
  const days: string[] = [];
  for (let d = today, i = 0; i < DAYS_OFFERED; i += 1, d = nextDate(d)) days.push(d);
  if (also && !days.includes(also) && also > today) days.push(also);
  return days.map((value) => ({ value, label: name.format(new Date(`${value}T12:00:00Z`)) }));
}

function App() {
  const [lang, setLang] = useState<PageLang>(visitorLang() ?? "en");
  const t = pageWords(lang).appointment;
  const [apt, setApt] = useState<Appointment | null>(null);
  const [missing, setMissing] = useState(!token);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [ticketLink, setTicketLink] = useState<string | null>(localStorage.getItem(ticketKey));
  const [now, setNow] = useState(Date.now());
  const [moving, setMoving] = useState(false);
  const [day, setDay] = useState("");
  const [slots, setSlots] = useState<RescheduleSlot[] | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  // Before the paint, with the words of the same render: the page never shows one language under another's lang.
  useLayoutEffect(() => showLang(lang), [lang]);
  useEffect(() => {
    if (!token) return;
    api<Appointment>("GET", `/appointments/${encodeURIComponent(appointmentId)}`, { headers })
      .then((found) => {
        setApt(found);
        if (!langChosen()) setLang(found.customer.language);
      })
      .catch(() => setMissing(true));
    // "Check-in opens at …" turns into the button when the time comes.
    const tick = setInterval(() => setNow(Date.now()), 15_000);
    const esc = (e: KeyboardEvent) => e.key === "Escape" && setConfirming(false);
    addEventListener("keydown", esc);
    return () => {
      clearInterval(tick);
      removeEventListener("keydown", esc);
    };
  }, []);

  const checkIn = async () => {
    if (!apt || busy) return;
    setBusy(true);
    setError(null);
    try {
      const done = await api<CheckInAnswer>("POST", `/appointments/${encodeURIComponent(apt.id)}/check-in`, { headers });
      const link = `/t/${encodeURIComponent(done.ticket.id)}${done.ticketToken ? `#token=${done.ticketToken}` : ""}`;
      localStorage.setItem(ticketKey, link);
      setTicketLink(link);
      setApt({ ...apt, status: done.appointment.status, ticketId: done.ticket.id });
    } catch (err) {
      setError(checkInRefusal(err, lang, apt.place.timezone));
    } finally {
      setBusy(false);
    }
  };

  const cancel = async () => {
    if (!apt || busy) return;
    setBusy(true);
    try {
      const done = await api<Appointment>("POST", `/appointments/${encodeURIComponent(apt.id)}/cancel`, { headers });
      setApt({ ...apt, status: done.status });
      setConfirming(false);
    } catch (err) {
      setError(err instanceof ApiRefusal && err.code === "INVALID_STATE" ? t.cancelled : checkInRefusal(err, lang, apt.place.timezone));
      setConfirming(false);
    } finally {
      setBusy(false);
    }
  };

  const loadSlots = async (date: string) => {
    if (!apt) return;
    setDay(date);
    setChosen(null);
    setSlots(null);
    try {
      const q = `from=${date}&to=${nextDate(date)}`;
      setSlots(await api<RescheduleSlot[]>("GET", `/appointments/${encodeURIComponent(apt.id)}/slots?${q}`, { headers }));
    } catch (err) {
      setSlots([]);
      setError(checkInRefusal(err, lang, apt.place.timezone));
    }
  };

  const startMoving = () => {
    if (!apt) return;
    setMoving(true);
    setNotice(null);
    setError(null);
    void loadSlots(localDate(apt.start, apt.place.timezone));
  };

  const move = async () => {
    if (!apt || !chosen || busy) return;
    setBusy(true);
    setError(null);
    try {
      const done = await api<Appointment>("PATCH", `/appointments/${encodeURIComponent(apt.id)}`, { headers, body: { start: chosen } });
      setApt({
        ...apt,
        start: done.start,
        end: done.end,
        staffId: done.staffId,
        place: { ...apt.place, checkInOpensAt: opensAfterMove(apt, done.start) },
      });
      setMoving(false);
      setNotice(say(t.moved, { when: when(done.start, apt.place.timezone, lang, true) }));
    } catch (err) {
      if (err instanceof ApiRefusal && err.code === "SLOT_UNAVAILABLE") {
        setError(t.slotTaken);
        void loadSlots(day);
      } else setError(checkInRefusal(err, lang, apt.place.timezone));
    } finally {
      setBusy(false);
    }
  };

  const switchLang = (next: PageLang) => {
    setLang(next);
    rememberLang(next);
  };

  const header = (
    <header class="bar">
      <h1>{apt ? apt.place.locationName : t.title}</h1>
      <span class="spacer" />
      <LanguageSwitch lang={lang} label={t.languages} onPick={switchLang} />
    </header>
  );

  if (missing || !apt) {
    return (
      <div class="status-page">
        {header}
        <main class="status-box">{missing && <p class="notice error">{t.notFound}</p>}</main>
      </div>
    );
  }

  const zone = apt.place.timezone;
  const open = now >= Date.parse(apt.place.checkInOpensAt);
  const sameDay = localDate(apt.place.checkInOpensAt, zone) === localDate(apt.start, zone);
  return (
    <div class="status-page">
      {header}
      <main class="status-box" data-status={apt.status}>
        <h2 class="label">{t.title}</h2>
        <p class="appointment-service">{apt.place.serviceName}</p>
        <p class="appointment-when" data-when>
          {when(apt.start, zone, lang, true)}
        </p>
        <p class="label">{say(t.at, { place: apt.place.locationName })}</p>
        {apt.status === "booked" && (
          <>
            <p class="label">{t.code}</p>
            <p class="big-code appointment-code" data-code>
              {apt.checkInCode}
            </p>
            <p class="hint">{t.codeHint}</p>
          </>
        )}
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
        {apt.status === "booked" && !open && (
          <p class="notice" data-opens>
            {say(t.opensAt, { when: when(apt.place.checkInOpensAt, zone, lang, !sameDay) })}
          </p>
        )}
        {notice && (
          <p class="notice" role="status" data-moved>
            {notice}
          </p>
        )}
        {apt.status === "booked" && moving && (
          <section class="reschedule" aria-labelledby="reschedule-title">
            <h2 id="reschedule-title" class="label">
              {t.rescheduleTitle}
            </h2>
            <label>
              {t.day}{" "}
              <select data-day value={day} onChange={(e: Event) => void loadSlots((e.target as HTMLSelectElement).value)}>
                {dayChoices(localDate(new Date(now).toISOString(), zone), lang, day).map((d) => (
                  <option value={d.value} selected={d.value === day}>
                    {d.label}
                  </option>
                ))}
              </select>
            </label>
            {slots !== null && slots.filter((s) => !s.current).length === 0 && <p class="hint">{t.noSlots}</p>}
            {slots !== null && slots.length > 0 && (
              <div class="slots" role="radiogroup" aria-labelledby="reschedule-title">
                {slots.map((s) => (
                  <button
                    type="button"
                    role="radio"
                    aria-checked={chosen === s.start ? "true" : "false"}
                    class={chosen === s.start ? "primary" : ""}
                    disabled={s.current || busy}
                    data-slot={s.start}
                    onClick={() => setChosen(s.start)}
                  >
                    {s.current ? say(t.currentSlot, { time: when(s.start, zone, lang, false) }) : when(s.start, zone, lang, false)}
                  </button>
                ))}
              </div>
            )}
            <div class="actions">
              <button type="button" onClick={() => setMoving(false)} disabled={busy}>
                {t.keepTime}
              </button>
              {chosen && (
                <button type="button" class="primary" onClick={move} disabled={busy} data-move>
                  {say(t.move, { when: when(chosen, zone, lang, true) })}
                </button>
              )}
            </div>
          </section>
        )}
        {apt.status === "checked_in" && (
          <p class="notice" role="status">
            {t.checkedIn}
          </p>
        )}
        {apt.status === "cancelled" && (
          <p class="notice" role="status">
            {t.cancelled}
          </p>
        )}
        {apt.status === "no_show" && (
          <p class="notice" role="status">
            {t.noShow}
          </p>
        )}
        <div class="actions">
          {apt.status === "booked" && open && (
            <button type="button" class="primary" onClick={checkIn} disabled={busy}>
              {t.checkIn}
            </button>
          )}
          {apt.status === "checked_in" && apt.ticketId && (
            <a class="button primary" href={ticketLink ?? `/t/${encodeURIComponent(apt.ticketId)}`}>
              {t.followTicket}
            </a>
          )}
          {apt.status === "booked" && !moving && (
            <button type="button" onClick={startMoving} disabled={busy}>
              {t.reschedule}
            </button>
          )}
          {apt.status === "booked" && (
            <button type="button" class="danger" onClick={() => setConfirming(true)} disabled={busy}>
              {t.cancel}
            </button>
          )}
        </div>
      </main>
      {confirming && apt.status === "booked" && (
        <div class="overlay" onClick={(e: Event) => e.target === e.currentTarget && setConfirming(false)}>
          <div role="dialog" aria-modal="true" aria-labelledby="cancel-title" aria-describedby="cancel-text">
            <h2 id="cancel-title">{t.confirmTitle}</h2>
            <p id="cancel-text">{t.confirmText}</p>
            <div class="actions">
              <button type="button" onClick={() => setConfirming(false)} autofocus>
                {t.keep}
              </button>
              <button type="button" class="danger" onClick={cancel} disabled={busy}>
                {t.confirmYes}
              </button>
            </div>
          </div>
        </div>
      )}
    </div>
  );
}

/** When check-in opens after a move: as far before the new start as it was before the old. */
function opensAfterMove(apt: Appointment, start: string): string {
  const lead = Date.parse(apt.start) - Date.parse(apt.place.checkInOpensAt);
  return new Date(Date.parse(start) - lead).toISOString();
}

render(<App />, document.getElementById("app")!);
