// The ticket kiosk (/kiosk?location=loc_…&key=qk_live_…): touch-first. Big buttons of the
// location's open queues, optional name and phone, then the ticket with its QR code to the
// visitor's status page; prints an 80 mm receipt; resets itself after 20 s without a touch.
import { render, useEffect, useRef, useState } from "hono/jsx/dom";
import { renderSVG } from "uqr";
import "../shared/base.css";
import "./kiosk.css";
import { api, ApiRefusal, defaultHeaders, type Schemas, type WidgetTicket } from "../shared/api";
import { browserLang, minutes, rememberLang, type Lang } from "../shared/i18n";

// GET /v1/widget/locations/{locationId}/kiosk (src/widget/kiosk.routes.ts).
type KioskInfo = Schemas["KioskInfo"];
type Issued = WidgetTicket & { ticketToken: string };

const IDLE_MS = 20_000;

const TEXT = {
  en: {
    welcome: "Welcome",
    choose: "Choose your service",
    name: "Your name (optional)",
    phone: "Mobile phone (optional)",
    take: "Take a ticket",
    yourTicket: "Your ticket",
    position: "Position",
    ahead: (n: number) => (n <= 1 ? "You are next" : `${n - 1} before you`),
    estimate: "Estimated wait",
    scan: "Scan to follow your turn on your phone",
    print: "Print the ticket",
    done: "Done",
    none: "No service takes tickets right now.",
    missing: "This kiosk is not set up: its address needs ?location=…&key=….",
    phoneHint: "For a text when it is your turn. International format, e.g. +33 6 12 34 56 78",
    phoneBad: "Enter the number in international format (+ and digits).",
    language: "Français",
    reset: "This screen resets after 20 seconds.",
    issuedAt: "Issued",
  },
  fr: {
    welcome: "Bienvenue",
    choose: "Choisissez votre service",
    name: "Votre nom (facultatif)",
    phone: "Téléphone mobile (facultatif)",
    take: "Prendre un ticket",
    yourTicket: "Votre ticket",
    position: "Position",
    ahead: (n: number) => (n <= 1 ? "Vous êtes le prochain" : `${n - 1} avant vous`),
    estimate: "Attente estimée",
    scan: "Scannez pour suivre votre tour sur votre téléphone",
    print: "Imprimer le ticket",
    done: "Terminé",
    none: "Aucun service ne délivre de tickets pour le moment.",
    missing: "Cette borne n'est pas configurée : son adresse doit contenir ?location=…&key=….",
    phoneHint: "Pour un SMS quand c'est votre tour. Format international, par ex. +33 6 12 34 56 78",
    phoneBad: "Saisissez le numéro au format international (+ et chiffres).",
    language: "English",
    reset: "Cet écran se réinitialise après 20 secondes.",
    issuedAt: "Délivré le",
  },
};

/** The calling code of the location's country, from its time zone (the phone field's prefix). */
const CALLING_CODE: Record<string, string> = {
  "Europe/Paris": "+33",
  "Europe/Brussels": "+32",
  "Europe/Zurich": "+41",
  "Europe/Luxembourg": "+352",
  "Europe/London": "+44",
  "Europe/Berlin": "+49",
  "Europe/Madrid": "+34",
  "Europe/Rome": "+39",
  "Africa/Abidjan": "+225",
  "Africa/Dakar": "+221",
  "Africa/Porto-Novo": "+229",
  "Africa/Lome": "+228",
  "Africa/Bamako": "+223",
  "Africa/Ouagadougou": "+226",
  "Africa/Niamey": "+227",
  "Africa/Douala": "+237",
  "Africa/Casablanca": "+212",
  "Africa/Tunis": "+216",
  "America/Montreal": "+1",
  "America/Toronto": "+1",
  "America/New_York": "+1",
};

function App() {
  const params = new URLSearchParams(location.search);
  const locationId = params.get("location");
  const key = params.get("key");
  const [lang, setLang] = useState<Lang>(browserLang());
  const t = TEXT[lang];
  const [info, setInfo] = useState<KioskInfo | null>(null);
  const [error, setError] = useState<string | null>(locationId && key ? null : TEXT[browserLang()].missing);
  const [issued, setIssued] = useState<{ ticket: Issued; serviceName: string; at: number } | null>(null);
  const [busy, setBusy] = useState(false);
  const idle = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const form = useRef<HTMLFormElement | null>(null);

  const prefix = () => (info ? (CALLING_CODE[info.timezone] ?? "+") : "+");

  const reset = () => {
    setIssued(null);
    setError(null);
    form.current?.reset();
    const phone = document.querySelector<HTMLInputElement>("input[name=phone]");
    if (phone) phone.value = prefix();
  };

  // Any touch or key restarts the idle timer; 20 s without one puts the kiosk back to its start.
  useEffect(() => {
    const poke = () => {
      clearTimeout(idle.current);
      idle.current = setTimeout(reset, IDLE_MS);
    };
    for (const event of ["pointerdown", "keydown", "input"]) addEventListener(event, poke, { passive: true });
    poke();
    return () => {
      for (const event of ["pointerdown", "keydown", "input"]) removeEventListener(event, poke);
    };
  }, [info?.locationId]);

  useEffect(() => {
    if (!locationId || !key) return;
    defaultHeaders["X-API-Key"] = key;
    api<KioskInfo>("GET", `/widget/locations/${encodeURIComponent(locationId)}/kiosk`)
      .then((found) => {
        setInfo(found);
        if (!params.get("lang") && !localStorage.getItem("pages:lang")) setLang(found.defaultLanguage);
        document.title = `${found.organizationName} — ${found.name}`;
      })
      .catch((err: unknown) => setError(err instanceof ApiRefusal ? err.message : String(err)));
  }, []);

  const take = async (queue: KioskInfo["queues"][number]) => {
    if (busy) return;
    const data = new FormData(form.current!);
    const visitorName = String(data.get("visitorName") ?? "").trim();
    const rawPhone = String(data.get("phone") ?? "").replace(/[\s.()-]/g, "");
    const phone = rawPhone === prefix() || rawPhone === "+" ? "" : rawPhone;
    if (phone && !/^\+[1-9]\d{6,14}$/.test(phone)) {
      setError(t.phoneBad);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const ticket = await api<Issued>("POST", `/widget/queue/${queue.queueId}/join`, {
        body: { ...(visitorName ? { visitorName } : {}), ...(phone ? { phone } : {}) },
      });
      setIssued({ ticket, serviceName: queue.serviceName, at: Date.now() });
    } catch (err) {
      setError(err instanceof ApiRefusal ? err.message : String(err));
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
      <h1>{info ? `${info.organizationName} — ${info.name}` : t.welcome}</h1>
      <span class="spacer" />
      <button type="button" onClick={switchLang} lang={lang === "fr" ? "en" : "fr"}>
        {t.language}
      </button>
    </header>
  );

  if (issued) {
    const { ticket } = issued;
    const statusUrl = `${location.origin}/t/${ticket.id}#token=${ticket.ticketToken}`;
    const when = new Intl.DateTimeFormat(lang === "fr" ? "fr-FR" : "en-GB", {
      dateStyle: "short",
      timeStyle: "short",
      timeZone: info?.timezone ?? "UTC",
    }).format(issued.at);
    return (
      <div>
        {header}
        <section class="issued card receipt" aria-labelledby="issued-title">
          <p class="print-only org">{info ? `${info.organizationName} — ${info.name}` : ""}</p>
          <h2 id="issued-title">{t.yourTicket}</h2>
          <p class="big-code" data-code>
            {ticket.displayCode}
          </p>
          <p class="service">{issued.serviceName}</p>
          <dl>
            <dt>{t.position}</dt>
            <dd>{ticket.position ? t.ahead(ticket.position) : "—"}</dd>
            <dt>{t.estimate}</dt>
            <dd>{ticket.estimatedWaitMinutes !== null ? `~${minutes(ticket.estimatedWaitMinutes, lang)}` : "—"}</dd>
          </dl>
          <div class="qr" role="img" aria-label={t.scan} dangerouslySetInnerHTML={{ __html: renderSVG(statusUrl, { border: 1 }) }} />
          <p class="scan">{t.scan}</p>
          <p class="print-only when">
            {t.issuedAt} {when}
          </p>
          <div class="actions no-print">
            <button type="button" onClick={() => print()}>
              {t.print}
            </button>
            <button type="button" class="primary" onClick={reset}>
              {t.done}
            </button>
          </div>
          <p class="muted no-print">{t.reset}</p>
        </section>
      </div>
    );
  }

  return (
    <div>
      {header}
      <section class="choose" aria-labelledby="choose-title">
        <h2 id="choose-title">{t.choose}</h2>
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
        <form ref={form} class="who card" onSubmit={(e: Event) => e.preventDefault()}>
          <label>
            {t.name}
            <input name="visitorName" autocomplete="off" maxLength={100} />
          </label>
          <label>
            {t.phone}
            <input name="phone" type="tel" inputMode="tel" autocomplete="off" value={prefix()} aria-describedby="phone-hint" />
            <span class="hint" id="phone-hint">
              {t.phoneHint}
            </span>
          </label>
        </form>
        {info && info.queues.length === 0 && <p class="notice">{t.none}</p>}
        <div class="services">
          {info?.queues.map((q) => {
            const several = info.queues.filter((other) => other.serviceId === q.serviceId).length > 1;
            return (
              <button type="button" class="service-button" disabled={busy} onClick={() => take(q)}>
                <span class="letter" aria-hidden="true">
                  {q.letter}
                </span>
                <span>{several ? `${q.serviceName} — ${q.queueName}` : q.serviceName}</span>
              </button>
            );
          })}
        </div>
      </section>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
