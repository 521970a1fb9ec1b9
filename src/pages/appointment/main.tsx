// The customer's appointment page (/appointments/{id}#token=…), the manage link of the
// confirmation (src/appointments/announcements.ts): the token stays in the fragment and in this
// browser's storage. Shows the appointment and its check-in code, checks it in once check-in is
// open ("check-in opens at …" before), then links to the ticket's status page; cancels after a
// confirmation. Rescheduling is not offered here yet (docs/pages.md).
import { render, useEffect, useState } from "hono/jsx/dom";
import "../shared/base.css";
import "../status/status.css";
import { api, ApiRefusal, type Schemas } from "../shared/api";
import { browserLang, rememberLang, staffLang, type Lang } from "../shared/i18n";
import { checkInRefusal } from "../shared/refusals";

type Appointment = Schemas["AppointmentDetail"];
type CheckInAnswer = Schemas["AppointmentCheckIn"];

const TEXT = {
  en: {
    title: "Your appointment",
    at: (place: string) => `at ${place}`,
    code: "Check-in code",
    codeHint: 'At the branch, enter it at the kiosk ("I have an appointment"), or check in here.',
    opensAt: (when: string) => `Check-in opens at ${when}.`,
    checkIn: "I am here: check in",
    checkedIn: "You are checked in.",
    followTicket: "Follow your turn",
    cancel: "Cancel the appointment",
    confirmTitle: "Cancel this appointment?",
    confirmText: "The time is given to someone else. You can book again later.",
    confirmYes: "Yes, cancel it",
    keep: "Keep it",
    cancelled: "This appointment is cancelled.",
    noShow: "This appointment has passed without a check-in.",
    notFound: "This appointment cannot be shown: the link is incomplete or no longer valid.",
    language: "Français",
  },
  fr: {
    title: "Votre rendez-vous",
    at: (place: string) => `à ${place}`,
    code: "Code d'arrivée",
    codeHint: "À l'agence, saisissez-le sur la borne (« J'ai un rendez-vous »), ou enregistrez votre arrivée ici.",
    opensAt: (when: string) => `L'enregistrement de l'arrivée ouvre à ${when}.`,
    checkIn: "Je suis arrivé : enregistrer mon arrivée",
    checkedIn: "Votre arrivée est enregistrée.",
    followTicket: "Suivre mon tour",
    cancel: "Annuler le rendez-vous",
    confirmTitle: "Annuler ce rendez-vous ?",
    confirmText: "L'horaire sera proposé à quelqu'un d'autre. Vous pourrez reprendre rendez-vous.",
    confirmYes: "Oui, l'annuler",
    keep: "Le garder",
    cancelled: "Ce rendez-vous est annulé.",
    noShow: "Ce rendez-vous est passé sans enregistrement d'arrivée.",
    notFound: "Ce rendez-vous ne peut pas être affiché : le lien est incomplet ou n'est plus valable.",
    language: "English",
  },
};

const appointmentId = decodeURIComponent(location.pathname.split("/")[2] ?? "");
const storageKey = `pages:appointment:${appointmentId}`;
const ticketKey = `pages:appointment-ticket:${appointmentId}`;
const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? localStorage.getItem(storageKey) ?? "";
if (token) localStorage.setItem(storageKey, token);
const headers = { "X-Appointment-Token": token };

function when(iso: string, zone: string, lang: Lang, withDate: boolean): string {
  const f = new Intl.DateTimeFormat(lang === "fr" ? "fr-FR" : "en-GB", {
    timeZone: zone,
    ...(withDate ? { weekday: "long", day: "numeric", month: "long" } : {}),
    hour: "2-digit",
    minute: "2-digit",
  }).format(new Date(iso));
  return lang === "fr" ? f.replace(/(\d\d):(\d\d)/, "$1 h $2") : f;
}

function App() {
  const [lang, setLang] = useState<Lang>(browserLang());
  const t = TEXT[lang];
  const [apt, setApt] = useState<Appointment | null>(null);
  const [missing, setMissing] = useState(!token);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [ticketLink, setTicketLink] = useState<string | null>(localStorage.getItem(ticketKey));
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);
  useEffect(() => {
    if (!token) return;
    api<Appointment>("GET", `/appointments/${encodeURIComponent(appointmentId)}`, { headers })
      .then((found) => {
        setApt(found);
        if (!localStorage.getItem("pages:lang") && !new URLSearchParams(location.search).get("lang"))
          setLang(staffLang(found.customer.language));
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

  const switchLang = () => {
    const next: Lang = lang === "fr" ? "en" : "fr";
    setLang(next);
    rememberLang(next);
  };

  const header = (
    <header class="bar">
      <h1>{apt ? apt.place.locationName : t.title}</h1>
      <span class="spacer" />
      <button type="button" onClick={switchLang} lang={lang === "fr" ? "en" : "fr"}>
        {t.language}
      </button>
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
  const day = (iso: string) => new Intl.DateTimeFormat("en-CA", { timeZone: zone, dateStyle: "short" }).format(new Date(iso));
  const sameDay = day(apt.place.checkInOpensAt) === day(apt.start);
  return (
    <div class="status-page">
      {header}
      <main class="status-box" data-status={apt.status}>
        <h2 class="label">{t.title}</h2>
        <p class="appointment-service">{apt.place.serviceName}</p>
        <p class="appointment-when" data-when>
          {when(apt.start, zone, lang, true)}
        </p>
        <p class="label">{t.at(apt.place.locationName)}</p>
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
            {t.opensAt(when(apt.place.checkInOpensAt, zone, lang, !sameDay))}
          </p>
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

render(<App />, document.getElementById("app")!);
