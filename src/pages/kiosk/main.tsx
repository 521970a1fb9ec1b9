// The ticket kiosk (/kiosk?location=loc_…&key=qk_live_…): touch-first. Big buttons of the
// location's open queues, optional name and phone, the service's questions when it has any, then
// the ticket with its QR code to the visitor's status page; prints the receipt (silently on a
// paired USB printer, ./printer.ts, else the print dialog); resets itself after 20 s without a touch.
import { render, useEffect, useLayoutEffect, useRef, useState } from "hono/jsx/dom";
import { renderSVG } from "uqr";
import "../shared/base.css";
import "./kiosk.css";
import { api, ApiRefusal, defaultHeaders, type Schemas, type WidgetTicket } from "../shared/api";
import { LanguageSwitch } from "../shared/language-switch";
import { langChosen, languageMeta, minutes, pageWords, rememberLang, say, showLang, visitorLang, type PageLang } from "../shared/i18n";
import {
  askedAtJoin,
  checkAnswers,
  IntakeInputs,
  readAnswers,
  type IntakeAnswers,
  type IntakeErrors,
  type IntakeField,
} from "../shared/intake";
import { checkInRefusal, joinRefusal } from "../shared/refusals";
import { canPairPrinter, pairedPrinter, pairPrinter, printBytes } from "./printer";

// GET /v1/widget/locations/{locationId}/kiosk (src/widget/kiosk.routes.ts).
type KioskInfo = Schemas["KioskInfo"];
type Issued = WidgetTicket & { ticketToken: string | null };
type KioskCheckIn = Schemas["KioskCheckIn"];
type KioskQueue = KioskInfo["queues"][number];
/** What the questions' step needs of a queue. */
type AskedQueue = Pick<KioskQueue, "queueId" | "serviceName">;

const IDLE_MS = 20_000;

/** The kiosk's words in `lang` (src/domain/languages), with the few that take a value. */
function words(lang: PageLang) {
  const w = pageWords(lang).kiosk;
  return {
    ...w,
    ahead: (n: number) => (n <= 1 ? w.next : say(w.ahead, { n: n - 1 })),
    paired: (name: string) => say(w.paired, { name }),
    appointmentAt: (time: string) => say(w.appointmentAt, { time }),
  };
}

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

/** The receipt's ESC/POS bytes, read with the visitor's ticket token (GET /v1/tickets/{id}/receipt). */
async function receiptBytes(ticket: Issued & { ticketToken: string }, lang: PageLang): Promise<Uint8Array<ArrayBuffer>> {
  const res = await fetch(`/v1/tickets/${encodeURIComponent(ticket.id)}/receipt?format=escpos&language=${lang}`, {
    headers: { "X-Ticket-Token": ticket.ticketToken },
  });
  if (!res.ok) throw new Error(`receipt: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

function App() {
  const params = new URLSearchParams(location.search);
  const locationId = params.get("location");
  const key = params.get("key");
  const setup = params.get("printer") === "setup";
  const [lang, setLang] = useState<PageLang>(visitorLang() ?? "en");
  const t = words(lang);
  const [info, setInfo] = useState<KioskInfo | null>(null);
  const [error, setError] = useState<string | null>(locationId && key ? null : words(visitorLang() ?? "en").missing);
  const [issued, setIssued] = useState<{ ticket: Issued; serviceName: string; at: number; note?: string } | null>(null);
  /** The "I have an appointment" screen: the code typed so far (null: not on that screen). */
  const [code, setCode] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // What the visitor typed is state, not the inputs' own: it survives the location's arrival and the questions' step.
  const [visitorName, setVisitorName] = useState("");
  /** null: untouched, the field shows the location's calling code. */
  const [phone, setPhone] = useState<string | null>(null);
  const [phoneInvalid, setPhoneInvalid] = useState(false);
  /** The service's questions on screen: before a walk-in's ticket, or (`code`) before an appointment's check-in. */
  const [asking, setAsking] = useState<{ queue: AskedQueue; fields: IntakeField[]; code?: string } | null>(null);
  const [answerErrors, setAnswerErrors] = useState<IntakeErrors>({});
  const [printState, setPrintState] = useState<"idle" | "printing" | "printed" | "failed">("idle");
  const [setupNote, setSetupNote] = useState<string | null>(null);
  const idle = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const questionsOf = useRef<Record<string, IntakeField[]>>({});

  const prefix = () => (info ? (CALLING_CODE[info.timezone] ?? "+") : "+");

  const reset = () => {
    setIssued(null);
    setCode(null);
    setError(null);
    setAsking(null);
    setAnswerErrors({});
    setVisitorName("");
    setPhone(null);
    setPhoneInvalid(false);
    setPrintState("idle");
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

  // Before the paint, with the words of the same render: the page never shows one language under another's lang.
  useLayoutEffect(() => showLang(lang), [lang]);

  useEffect(() => {
    if (!locationId || !key) return;
    defaultHeaders["X-API-Key"] = key;
    api<KioskInfo>("GET", `/widget/locations/${encodeURIComponent(locationId)}/kiosk`)
      .then((found) => {
        setInfo(found);
        // The visitor's language when the location offers it, else the location's default.
        if (!langChosen() || !visitorLang(found.languages)) setLang(found.defaultLanguage);
        document.title = found.name.startsWith(found.organizationName) ? found.name : `${found.organizationName} — ${found.name}`;
      })
      .catch((err: unknown) => setError(joinRefusal(err, visitorLang() ?? "en").text));
  }, []);

  /** Prints the receipt on the paired USB printer; answers false when there is none (use the dialog). */
  const printSilently = async (ticket: Issued): Promise<boolean> => {
    if (ticket.ticketToken === null) return false;
    const printer = await pairedPrinter();
    if (!printer) return false;
    setPrintState("printing");
    try {
      await printBytes(printer, await receiptBytes({ ...ticket, ticketToken: ticket.ticketToken }, lang));
      setPrintState("printed");
    } catch {
      setPrintState("failed");
    }
    return true;
  };

  const join = async (queue: AskedQueue, intake: IntakeAnswers | null, fields: IntakeField[]) => {
    const name = visitorName.trim();
    const rawPhone = (phone ?? "").replace(/[\s.()-]/g, "");
    const sentPhone = rawPhone === prefix() || rawPhone === "+" ? "" : rawPhone;
    setBusy(true);
    setError(null);
    try {
      const ticket = await api<Issued>("POST", `/widget/queue/${queue.queueId}/join`, {
        body: {
          ...(name ? { visitorName: name } : {}),
          ...(sentPhone ? { phone: sentPhone } : {}),
          ...(intake ? { intake } : {}),
          language: lang,
        },
      });
      setAsking(null);
      setIssued({ ticket, serviceName: queue.serviceName, at: Date.now() });
      void printSilently(ticket);
    } catch (err) {
      const refusal = joinRefusal(err, lang, fields);
      if (refusal.field?.startsWith("intake.") && asking) {
        setAnswerErrors({ [refusal.field.slice("intake.".length)]: refusal.text });
      } else {
        setAsking(null);
        setPhoneInvalid(refusal.field === "phone");
        setError(refusal.text);
      }
    } finally {
      setBusy(false);
    }
  };

  const take = async (queue: KioskQueue) => {
    if (busy) return;
    const rawPhone = (phone ?? "").replace(/[\s.()-]/g, "");
    if (rawPhone && rawPhone !== prefix() && rawPhone !== "+" && !/^\+[1-9]\d{6,14}$/.test(rawPhone)) {
      setPhoneInvalid(true);
      setError(t.phoneBad);
      return;
    }
    setPhoneInvalid(false);
    setError(null);
    let fields = questionsOf.current[queue.queueId];
    if (!fields) {
      setBusy(true);
      try {
        const found = await api<Schemas["ServiceIntake"]>("GET", `/widget/queue/${queue.queueId}/intake`);
        fields = askedAtJoin(found.fields);
        questionsOf.current[queue.queueId] = fields;
      } catch (err) {
        setError(joinRefusal(err, lang).text);
        return;
      } finally {
        setBusy(false);
      }
    }
    if (fields.length === 0) return join(queue, null, []);
    setAnswerErrors({});
    setAsking({ queue, fields });
  };

  const answer = (e: Event) => {
    e.preventDefault();
    if (!asking || busy) return;
    const answers = readAnswers(e.target as HTMLFormElement, asking.fields);
    const problems = checkAnswers(asking.fields, answers, lang);
    setAnswerErrors(problems);
    if (Object.keys(problems).length > 0) {
      document.querySelector<HTMLElement>(`[data-question="${Object.keys(problems)[0]}"] input`)?.focus();
      return;
    }
    if (asking.code !== undefined) void checkInWith(asking.code, answers);
    else void join(asking.queue, answers, asking.fields);
  };

  /** The kiosk's "I have an appointment": the code checks the appointment in, its ticket is the receipt. */
  const checkIn = (e: Event) => {
    e.preventDefault();
    if (busy || code === null) return;
    void checkInWith(code.replace(/[\s-]/g, "").toUpperCase(), null);
  };

  /**
   * Checks the appointment of `typed` in, with the answers to its service's questions once asked.
   * The kiosk learns that the service asks questions from the API's refusal (`intake.<key>`, with
   * the queue whose questions to read): it then asks them all, and shows a refused answer under its field.
   */
  const checkInWith = async (typed: string, intake: IntakeAnswers | null) => {
    if (!locationId) return;
    setBusy(true);
    setError(null);
    try {
      const done = await api<KioskCheckIn>("POST", `/widget/locations/${encodeURIComponent(locationId)}/check-in`, {
        body: { code: typed, ...(intake ? { intake } : {}) },
      });
      const serviceName = info?.queues.find((q) => q.queueId === done.ticket.queueId)?.serviceName ?? "";
      setCode(null);
      setAsking(null);
      setIssued({
        ticket: { ...done.ticket, ticketToken: done.ticketToken },
        serviceName,
        at: Date.now(),
        ...(done.ticketToken === null ? { note: t.alreadyIn } : {}),
      });
      void printSilently({ ...done.ticket, ticketToken: done.ticketToken });
    } catch (err) {
      const field = err instanceof ApiRefusal && typeof err.details.field === "string" ? err.details.field : "";
      const queueId = err instanceof ApiRefusal && typeof err.details.queueId === "string" ? err.details.queueId : null;
      const key = field.slice("intake.".length);
      if (field.startsWith("intake.") && asking?.code === typed && asking.fields.some((f) => f.key === key)) {
        // An answer the API refused: its words under its field.
        setAnswerErrors({ [key]: joinRefusal(err, lang, asking.fields).text });
        document.querySelector<HTMLElement>(`[data-question="${key}"] input`)?.focus();
      } else if (field.startsWith("intake.") && queueId) {
        // The service asks questions (or asks one more than on screen): read them and ask them all.
        try {
          const found = await api<Schemas["ServiceIntake"]>("GET", `/widget/queue/${encodeURIComponent(queueId)}/intake`);
          const fields = askedAtJoin(found.fields);
          const queue = info?.queues.find((q) => q.queueId === queueId) ?? { queueId, serviceName: "" };
          setAnswerErrors(asking?.code === typed ? { [key]: joinRefusal(err, lang, fields).text } : {});
          setAsking({ queue, fields, code: typed });
        } catch (failed) {
          setAsking(null);
          setError(checkInRefusal(failed, lang, info?.timezone ?? "UTC"));
        }
      } else {
        setAsking(null);
        setCode(typed);
        setError(checkInRefusal(err, lang, info?.timezone ?? "UTC"));
        document.querySelector<HTMLInputElement>('input[name="code"]')?.focus();
      }
    } finally {
      setBusy(false);
    }
  };

  const pair = async () => {
    if (!canPairPrinter()) return setSetupNote(t.noWebUsb);
    const device = await pairPrinter();
    setSetupNote(device ? t.paired(device.productName ?? "USB") : t.notPaired);
  };

  const switchLang = (next: PageLang) => {
    setLang(next);
    rememberLang(next);
  };

  // "Demo Bank — Demo Bank Opéra" says the name twice: a branch named after its business stands alone.
  const place = info ? (info.name.startsWith(info.organizationName) ? info.name : `${info.organizationName} — ${info.name}`) : null;

  const header = (
    <header class="bar">
      <h1>{place ?? t.welcome}</h1>
      <span class="spacer" />
      <LanguageSwitch lang={lang} offered={info?.languages} label={t.languages} onPick={switchLang} />
    </header>
  );

  if (issued) {
    const { ticket } = issued;
    const statusUrl = ticket.ticketToken === null ? null : `${location.origin}/t/${ticket.id}?lang=${lang}#token=${ticket.ticketToken}`;
    const appointmentTime =
      ticket.kind === "appointment" && ticket.appointmentAt
        ? new Intl.DateTimeFormat(languageMeta(lang).locale, { timeStyle: "short", timeZone: info?.timezone ?? "UTC" }).format(
            new Date(ticket.appointmentAt),
          )
        : null;
    const when = new Intl.DateTimeFormat(languageMeta(lang).locale, {
      dateStyle: "short",
      timeStyle: "short",
      timeZone: info?.timezone ?? "UTC",
    }).format(issued.at);
    const printNote = { idle: null, printing: t.printing, printed: t.printed, failed: t.printFailed }[printState];
    return (
      <div>
        {header}
        <main>
          <section class="issued card receipt" aria-labelledby="issued-title">
            <p class="print-only org">{place ?? ""}</p>
            <h2 id="issued-title">{t.yourTicket}</h2>
            <p class="big-code" data-code>
              {ticket.displayCode}
            </p>
            <p class="service">{issued.serviceName}</p>
            {appointmentTime && (
              <p class="appointment-at" data-kind="appointment">
                {t.appointmentAt(lang === "fr" ? appointmentTime.replace(":", " h ") : appointmentTime)}
              </p>
            )}
            {issued.note && (
              <p class="notice" role="status">
                {issued.note}
              </p>
            )}
            <dl>
              <dt>{t.position}</dt>
              <dd>{ticket.position ? t.ahead(ticket.position) : "—"}</dd>
              <dt>{t.estimate}</dt>
              <dd>{ticket.estimatedWaitMinutes !== null ? `~${minutes(ticket.estimatedWaitMinutes, lang)}` : "—"}</dd>
            </dl>
            {statusUrl && (
              <div class="qr" role="img" aria-label={t.scan} dangerouslySetInnerHTML={{ __html: renderSVG(statusUrl, { border: 1 }) }} />
            )}
            {statusUrl && <p class="scan">{t.scan}</p>}
            <p class="print-only when">
              {t.issuedAt} {when}
            </p>
            {printNote && (
              <p class={`notice no-print${printState === "failed" ? " error" : ""}`} role="status" data-print={printState}>
                {printNote}
              </p>
            )}
            <div class="actions no-print">
              <button
                type="button"
                onClick={async () => {
                  if (!(await printSilently(ticket))) print();
                }}
              >
                {t.print}
              </button>
              <button type="button" class="primary" onClick={reset}>
                {t.done}
              </button>
            </div>
            <p class="muted no-print">{t.reset}</p>
          </section>
        </main>
      </div>
    );
  }

  if (code !== null && !asking) {
    return (
      <div>
        {header}
        <main class="choose">
          <h2 id="code-title">{t.codeTitle}</h2>
          {error && (
            <p class="notice error" role="alert" id="code-error">
              {error}
            </p>
          )}
          <form class="check-in card" aria-labelledby="code-title" onSubmit={checkIn} noValidate>
            <label>
              {t.codeLabel}
              <input
                name="code"
                class="code-input"
                autocomplete="off"
                autocapitalize="characters"
                spellcheck={false}
                maxLength={8}
                autofocus
                value={code}
                aria-describedby={error ? "code-hint code-error" : "code-hint"}
                aria-invalid={error ? "true" : undefined}
                onInput={(e: Event) => setCode((e.target as HTMLInputElement).value.toUpperCase())}
              />
              <span class="hint" id="code-hint">
                {t.codeHint}
              </span>
            </label>
            <div class="actions">
              <button
                type="button"
                onClick={() => {
                  setCode(null);
                  setError(null);
                }}
              >
                {t.back}
              </button>
              <button type="submit" class="primary" disabled={busy || code.replace(/[\s-]/g, "").length < 6}>
                {t.checkIn}
              </button>
            </div>
          </form>
        </main>
      </div>
    );
  }

  if (asking) {
    return (
      <div>
        {header}
        <main class="choose">
          <h2 id="questions-title">{t.questions}</h2>
          <p class="asked-service">{asking.queue.serviceName}</p>
          <form class="questions card" aria-labelledby="questions-title" onSubmit={answer} noValidate>
            <IntakeInputs fields={asking.fields} lang={lang} errors={answerErrors} idPrefix="q" />
            <div class="actions">
              <button type="button" onClick={() => setAsking(null)}>
                {t.back}
              </button>
              <button type="submit" class="primary" disabled={busy}>
                {asking.code !== undefined ? t.checkIn : t.take}
              </button>
            </div>
          </form>
        </main>
      </div>
    );
  }

  return (
    <div>
      {header}
      <main class="choose">
        <h2 id="choose-title">{t.choose}</h2>
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
        <form class="who card" aria-labelledby="choose-title" onSubmit={(e: Event) => e.preventDefault()}>
          <label>
            {t.name}
            <input
              name="visitorName"
              autocomplete="off"
              maxLength={100}
              value={visitorName}
              onInput={(e: Event) => setVisitorName((e.target as HTMLInputElement).value)}
            />
          </label>
          <label>
            {t.phone}
            <input
              name="phone"
              type="tel"
              inputMode="tel"
              autocomplete="off"
              value={phone ?? prefix()}
              aria-invalid={phoneInvalid ? "true" : undefined}
              aria-describedby="phone-hint"
              onInput={(e: Event) => setPhone((e.target as HTMLInputElement).value)}
            />
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
        <button
          type="button"
          class="appointment-button"
          onClick={() => {
            setError(null);
            setCode("");
          }}
        >
          {t.haveAppointment}
        </button>
        {setup && (
          <section class="setup card" aria-labelledby="setup-title">
            <h2 id="setup-title">{t.pair}</h2>
            <button type="button" onClick={pair}>
              {t.pair}
            </button>
            {setupNote && <p role="status">{setupNote}</p>}
          </section>
        )}
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
