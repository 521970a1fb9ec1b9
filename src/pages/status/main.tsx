// The visitor's status page (/t/{ticketId}#token=…): the token stays in the fragment (never sent
// to a server, never in a log) and in this browser's storage. Follows the ticket over the widget
// socket (ticket_update carries the whole VisitorTicket); leave, step back, web-push opt-in.
import { render, useEffect, useLayoutEffect, useState } from "hono/jsx/dom";
import "../shared/base.css";
import "./status.css";
import { api, ApiRefusal, type Schemas, type VisitorTicket } from "../shared/api";
import { langChosen, languageMeta, minutes, pageWords, rememberLang, say, showLang, visitorLang, type PageLang } from "../shared/i18n";
import { LanguageSwitch } from "../shared/language-switch";
import { openLive, type LiveState } from "../shared/live";

/** The status page's words in `lang` (src/domain/languages), with the few that take a value. */
function words(lang: PageLang) {
  const w = pageWords(lang).status;
  return {
    ...w,
    ahead: (n: number) => (n <= 1 ? w.next : say(w.ahead, { n: n - 1 })),
    goTo: (counter: string) => say(w.goTo, { counter }),
    wrongCode: (left: number) => (left <= 0 ? w.wrongCodeNone : say(left === 1 ? w.wrongCodeOne : w.wrongCodeMany, { n: left })),
    rateScore: (n: number) => say(w.rateScore, { n }),
    lateMinutes: (n: number) => say(w.lateMinutes, { n }),
    backAt: (time: string) => say(w.backAt, { time }),
    leg: (leg: { index: number; of: number }) => say(w.leg, leg),
  };
}

/** "10:45" (FR "10 h 45") in the visitor's language, on the branch's clock (the console's). */
function clock(iso: string, lang: PageLang, timeZone: string | undefined): string {
  const at = new Intl.DateTimeFormat(languageMeta(lang).locale, { hour: "2-digit", minute: "2-digit", timeZone }).format(new Date(iso));
  return lang === "fr" ? at.replace(":", " h ") : at;
}

/** The later turns offered ("I'm running late"), within the queue's `maxDeferMinutes`. */
const LATE_CHOICES = [10, 15, 30];
function lateChoices(maxMinutes: number): number[] {
  const fit = LATE_CHOICES.filter((m) => m <= maxMinutes);
  return fit.length > 0 ? fit : maxMinutes > 0 ? [maxMinutes] : [];
}

/** A leg of a visit of several services, served and handed on (docs/visits.md): the page follows the visitor. */
/** Reads of a leg whose hand-off is still in flight (about a second apart). */
let followTries = 0;
const handedOn = (t: VisitorTicket) => t.status === "served" && t.leg !== null && t.leg.index < t.leg.of;

const ticketId = decodeURIComponent(location.pathname.split("/")[2] ?? "");
const storageKey = `pages:ticket:${ticketId}`;
const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? localStorage.getItem(storageKey) ?? "";
if (token) localStorage.setItem(storageKey, token);

const FINAL = new Set(["served", "cancelled", "skipped", "expired"]);
/** Step back is allowed once per ticket: remembered here so the button stays gone after a reload. */
const steppedKey = `pages:stepped:${ticketId}`;
type TicketPlace = Schemas["WidgetTicketPlace"];
/** Web push needs a service worker, the Push API and notifications not refused (the server's key is checked at load). */
const pushPossible = () =>
  "serviceWorker" in navigator && "PushManager" in window && "Notification" in window && Notification.permission !== "denied";

/** Where the ticket's number stands (GET /v1/tickets/{ticketId}/phone-verification, docs/limits.md). */
interface PhoneCheck {
  status: "none" | "pending" | "expired" | "verified";
  expiresAt: string | null;
}
const phonePath = `/tickets/${ticketId}/phone-verification`;
/** The customer's verdict after the visit (docs/visits.md, feedback): the served ticket's token still opens it. */
const feedbackPath = `/widget/tickets/${ticketId}/feedback`;
type FeedbackState = Schemas["TicketFeedbackState"];

/** One tap gives the score (with the comment typed above, if any): 1–5 as a group of buttons. */
function Verdict(props: { lang: PageLang; state: FeedbackState | null; onGiven: (s: FeedbackState) => void }) {
  const t = words(props.lang);
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const state = props.state;
  if (!state || state.status === "not_served") return null;
  if (state.status === "given")
    return (
      <p class="notice verdict-done" role="status">
        {t.rated}
      </p>
    );
  if (state.status === "closed") return <p class="notice">{t.rateClosed}</p>;
  const send = async (score: number) => {
    setBusy(true);
    setError(null);
    try {
      await api("POST", feedbackPath, {
        headers: { "X-Ticket-Token": token },
        body: comment.trim() ? { score, comment: comment.trim() } : { score },
      });
      props.onGiven({ ...state, status: "given" });
    } catch (err) {
      if (err instanceof ApiRefusal && err.code === "FEEDBACK_ALREADY_GIVEN") return props.onGiven({ ...state, status: "given" });
      if (err instanceof ApiRefusal && err.code === "FEEDBACK_WINDOW_CLOSED") return props.onGiven({ ...state, status: "closed" });
      setError(err instanceof ApiRefusal ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="verdict" aria-labelledby="verdict-title">
      <h2 id="verdict-title">{t.rateTitle}</h2>
      <label class="verdict-comment">
        {t.rateComment}
        <textarea
          name="comment"
          rows={2}
          maxlength={1000}
          value={comment}
          onInput={(e: Event) => setComment((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      <p id="verdict-hint">{t.rateHint}</p>
      <div class="verdict-scores" role="group" aria-labelledby="verdict-title" aria-describedby="verdict-hint">
        {[1, 2, 3, 4, 5].map((n) => (
          <button type="button" data-score={n} aria-label={t.rateScore(n)} disabled={busy} onClick={() => void send(n)}>
            {n}
          </button>
        ))}
      </div>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function App() {
  const [lang, setLang] = useState<PageLang>(visitorLang() ?? "en");
  const t = words(lang);
  // Before the paint, with the words of the same render: the page never shows one language under another's lang.
  useLayoutEffect(() => showLang(lang), [lang]);
  const [ticket, setTicket] = useState<VisitorTicket | null>(null);
  const [missing, setMissing] = useState(!token);
  const [live, setLive] = useState<LiveState>("connecting");
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [phone, setPhone] = useState<PhoneCheck | null>(null);
  const [code, setCode] = useState("");
  const [place, setPlace] = useState<TicketPlace | null>(null);
  const [stepped, setStepped] = useState(localStorage.getItem(steppedKey) !== null);
  const [asking, setAsking] = useState(false);
  // Shown only where it can work: this browser can, and the server has a push key; gone once on.
  const [canNotify, setCanNotify] = useState(false);
  const [verdict, setVerdict] = useState<FeedbackState | null>(null);
  const [lateAsking, setLateAsking] = useState(false);
  // A refusal of DEFER_LIMIT_REACHED hides the button even if the queue's bounds read earlier said otherwise.
  const [lateSpent, setLateSpent] = useState(false);
  // The language the visitor chose at the join (the kiosk's, the widget's): the page speaks it
  // unless the visitor chose here (`?lang=`, the switch), and only if the business offers it.
  const [ticketLang, setTicketLang] = useState<PageLang | null>(null);
  useEffect(() => {
    if (ticketLang === null || langChosen() || (place && !place.languages.includes(ticketLang))) return;
    setLang(ticketLang);
  }, [ticketLang, place]);
  const readVerdict = () =>
    api<FeedbackState>("GET", feedbackPath, { headers: { "X-Ticket-Token": token } })
      .then(setVerdict)
      .catch(() => undefined);

  const show = (next: VisitorTicket) => {
    if (handedOn(next)) return follow(next);
    if (next.language) setTicketLang(next.language);
    setTicket((before) => {
      if (next.status === "called" && before?.status !== "called") navigator.vibrate?.([300, 150, 300]);
      return next;
    });
    if (FINAL.has(next.status)) {
      localStorage.removeItem(storageKey);
      localStorage.removeItem(steppedKey);
    }
    if (next.status === "served") void readVerdict();
  };

  /**
   * The visitor moved on to the visit's next service: this page becomes the next leg's (same token).
   * While the hand-off is in flight (`routedToId` still null), it says so and reads again.
   */
  const follow = (leg: VisitorTicket) => {
    setTicket(leg);
    localStorage.removeItem(storageKey);
    if (leg.routedToId) {
      localStorage.setItem(`pages:ticket:${leg.routedToId}`, token);
      location.replace(`/t/${encodeURIComponent(leg.routedToId)}${location.search}#token=${encodeURIComponent(token)}`);
    } else if (followTries++ < 30) setTimeout(() => void read(), 1000);
  };

  const read = () =>
    api<VisitorTicket>("GET", `/widget/tickets/${ticketId}`, { headers: { "X-Ticket-Token": token } })
      .then(show)
      .catch((err: unknown) => {
        if (err instanceof ApiRefusal && err.status === 404) {
          setMissing(true);
          // A served ticket's link, opened again after the visit: its verdict may still be open.
          if (token) void readVerdict();
        }
      });

  // Once: where the ticket is (business, branch, address), and whether notifications can work here.
  useEffect(() => {
    if (!token) return;
    api<TicketPlace>("GET", `/widget/tickets/${ticketId}/place`, { headers: { "X-Ticket-Token": token } })
      .then((found) => {
        setPlace(found);
        // Only the languages the business offers: the visitor's among them, else the business's default.
        setLang((now) => (found.languages.includes(now) ? now : (visitorLang(found.languages) ?? found.defaultLanguage)));
      })
      .catch(() => undefined);
    if (pushPossible())
      api<{ publicKey: string | null }>("GET", "/widget/push/public-key")
        .then((r) => setCanNotify(r.publicKey !== null))
        .catch(() => undefined);
  }, []);

  // Once: a number the organization wants proven shows the code field until it is.
  useEffect(() => {
    if (!token) return;
    api<PhoneCheck>("GET", phonePath, { headers: { "X-Ticket-Token": token } })
      .then(setPhone)
      .catch(() => undefined);
  }, []);

  useEffect(() => {
    if (!token) return;
    const channel = openLive({
      subscriptions: () => [{ action: "subscribe", ticketId, token }],
      onMessage: (m) => {
        if (m.type === "ticket_update") show(m.data as VisitorTicket);
      },
      onOpen: () => void read(),
      onState: setLive,
    });
    return () => channel.close();
  }, []);

  const act = async (what: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await what();
    } catch (err) {
      setNote(err instanceof ApiRefusal ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const leave = () =>
    act(async () => {
      if (!confirm(t.confirmLeave)) return;
      show(await api<VisitorTicket>("POST", `/widget/tickets/${ticketId}/cancel`, { headers: { "X-Ticket-Token": token } }));
    });

  const runningLate = (minutesLate: number) =>
    act(async () => {
      setLateAsking(false);
      // A few seconds short of the choice, so a device clock a little ahead of the server's stays within maxDeferMinutes.
      const until = new Date(Date.now() + minutesLate * 60_000 - 15_000).toISOString();
      try {
        show(
          await api<VisitorTicket>("POST", `/widget/tickets/${ticketId}/defer`, { headers: { "X-Ticket-Token": token }, body: { until } }),
        );
        setNote(null);
      } catch (err) {
        const code = err instanceof ApiRefusal ? err.code : "";
        if (code === "DEFER_LIMIT_REACHED") setLateSpent(true);
        setNote(
          code === "DEFER_LIMIT_REACHED"
            ? t.lateLimit
            : code === "DEFER_TOO_FAR"
              ? t.lateTooFar
              : code === "INVALID_STATE"
                ? t.lateTooLate
                : t.lateFailed,
        );
        if (code === "INVALID_STATE") void read();
      }
    });

  const markStepped = () => {
    localStorage.setItem(steppedKey, "1");
    setStepped(true);
  };

  const stepBack = () =>
    act(async () => {
      setAsking(false);
      try {
        show(
          await api<VisitorTicket>("POST", `/widget/tickets/${ticketId}/step-back`, {
            headers: { "X-Ticket-Token": token },
            body: { places: 1 },
          }),
        );
      } catch (err) {
        if (err instanceof ApiRefusal && err.details.reason === "already_stepped_back") markStepped();
        throw err;
      }
      markStepped();
      setNote(t.steppedBack);
    });

  const notify = () =>
    act(async () => {
      const { publicKey } = await api<{ publicKey: string | null }>("GET", "/widget/push/public-key");
      if (!publicKey || !pushPossible()) {
        setCanNotify(false);
        return setNote(t.notifyUnsupported);
      }
      const registration = await navigator.serviceWorker.register("/pages/push-sw.js");
      const key = Uint8Array.from(atob(publicKey.replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0));
      const subscription = (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key })).toJSON();
      await api("POST", `/widget/tickets/${ticketId}/push-subscription`, {
        headers: { "X-Ticket-Token": token },
        body: { endpoint: subscription.endpoint, keys: subscription.keys, language: lang },
      });
      setCanNotify(false);
      setNote(t.notifyOn);
    });

  const confirmCode = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      try {
        setPhone(await api<PhoneCheck>("POST", phonePath, { headers: { "X-Ticket-Token": token }, body: { code: code.trim() } }));
        setNote(t.phoneVerified);
      } catch (err) {
        const left = err instanceof ApiRefusal ? err.details.attemptsLeft : undefined;
        if (typeof left === "number") return setNote(t.wrongCode(left));
        if (err instanceof ApiRefusal && err.code === "INVALID_STATE") return setPhone({ status: "expired", expiresAt: null });
        throw err;
      }
    });
  };

  const newCode = () =>
    act(async () => {
      setPhone(await api<PhoneCheck>("POST", `${phonePath}/resend`, { headers: { "X-Ticket-Token": token } }));
      setCode("");
      setNote(t.codeSent);
    });

  const switchLang = (next: PageLang) => {
    setLang(next);
    rememberLang(next);
  };

  const header = (
    <header class="bar place-bar">
      <div class="place">
        <h1>{place ? place.organization.name : ticket ? ticket.queueName : t.title}</h1>
        {place?.location && (
          <p class="branch">
            <span class="branch-name" dir="auto">
              {place.location.name}
            </span>{" "}
            <span class="address" dir="auto">
              {place.location.address}
            </span>
          </p>
        )}
      </div>
      <span class="spacer" />
      {live === "offline" && <span class="live offline">{t.reconnecting}</span>}
      <LanguageSwitch lang={lang} offered={place?.languages} label={t.languages} onPick={switchLang} />
    </header>
  );

  if (missing && !ticket && verdict && verdict.status !== "not_served")
    return (
      <div class="status-page s-served">
        {header}
        <section class="status-box">
          <p class="state">{t.served}</p>
          <Verdict lang={lang} state={verdict} onGiven={setVerdict} />
        </section>
      </div>
    );
  if (missing && !ticket)
    return (
      <div>
        {header}
        <p class="notice error status-box" role="alert">
          {t.notFound}
        </p>
      </div>
    );
  if (!ticket) return <div>{header}</div>;

  const movingOn = handedOn(ticket);
  const finalText = movingOn ? null : FINAL.has(ticket.status) ? t[ticket.status as "served" | "cancelled" | "skipped" | "expired"] : null;
  const deferral = place?.defer ?? null;
  const canBeLate =
    ticket.status === "waiting" &&
    deferral !== null &&
    !lateSpent &&
    ticket.deferCount < deferral.maxDefers &&
    lateChoices(deferral.maxMinutes).length > 0;
  const backAt =
    ticket.status === "waiting" && ticket.deferredUntil && Date.parse(ticket.deferredUntil) > Date.now() ? ticket.deferredUntil : null;
  return (
    <div class={`status-page s-${ticket.status}`}>
      {header}
      <section class="status-box" aria-labelledby="code">
        <p class="label">
          {t.title}
          {ticket.queueName && ` · ${place?.serviceName ?? ticket.queueName}`}
        </p>
        <p class="big-code" id="code">
          {ticket.displayCode}
        </p>
        {ticket.leg && (
          <p class="leg" data-leg={`${ticket.leg.index}/${ticket.leg.of}`}>
            {t.leg(ticket.leg)}
          </p>
        )}
        {backAt && (
          <p class="back-at" role="status" data-back-at={backAt}>
            {t.backAt(clock(backAt, lang, place?.timeZone))}
          </p>
        )}
        {ticket.status === "waiting" && (
          <dl>
            <dt>{t.position}</dt>
            <dd data-position>{ticket.position ? t.ahead(ticket.position) : "—"}</dd>
            <dt>{t.estimate}</dt>
            <dd>{ticket.estimatedWaitMinutes !== null ? `~${minutes(ticket.estimatedWaitMinutes, lang)}` : "—"}</dd>
          </dl>
        )}
        {ticket.status === "called" && (
          <div class="turn" role="alert">
            <p class="turn-title">{t.yourTurn}</p>
            {ticket.counter && <p class="turn-counter">{t.goTo(ticket.counter)}</p>}
          </div>
        )}
        {ticket.status === "serving" && <p class="state">{t.serving}</p>}
        {ticket.status === "held" && <p class="state">{t.held}</p>}
        {finalText && <p class="state">{finalText}</p>}
        {movingOn && (
          <p class="state" role="status">
            {t.nextLeg}
          </p>
        )}
        {ticket.status === "served" && !movingOn && <Verdict lang={lang} state={verdict} onGiven={setVerdict} />}
        {(phone?.status === "pending" || phone?.status === "expired") && (ticket.status === "waiting" || ticket.status === "called") && (
          <form class="phone-code" onSubmit={confirmCode} aria-labelledby="phone-title">
            <h2 id="phone-title">{t.phoneTitle}</h2>
            <p>{phone.status === "expired" ? t.phoneExpired : t.phoneHint}</p>
            {phone.status === "pending" && (
              <label>
                {t.codeLabel}
                <input
                  name="code"
                  value={code}
                  onInput={(e: Event) => setCode((e.target as HTMLInputElement).value)}
                  inputmode="numeric"
                  autocomplete="one-time-code"
                  pattern="[0-9]{6}"
                  maxlength={6}
                  required
                />
              </label>
            )}
            {phone.status === "pending" && (
              <button type="submit" class="primary" disabled={busy}>
                {t.confirmCode}
              </button>
            )}
            <button type="button" onClick={newCode} disabled={busy}>
              {t.newCode}
            </button>
          </form>
        )}
        {note && (
          <p class="notice" role="status">
            {note}
          </p>
        )}
        {(ticket.status === "waiting" || ticket.status === "called") && (
          <div class="actions">
            {ticket.status === "waiting" && canNotify && (
              <button type="button" onClick={notify} disabled={busy}>
                {t.notify}
              </button>
            )}
            {canBeLate && (
              <button type="button" data-late onClick={() => setLateAsking(true)} disabled={busy}>
                {t.late}
              </button>
            )}
            {ticket.status === "waiting" && !stepped && (
              <button type="button" onClick={() => setAsking(true)} disabled={busy}>
                {t.stepBack}
              </button>
            )}
            <button type="button" class="danger" onClick={leave} disabled={busy}>
              {t.leave}
            </button>
          </div>
        )}
      </section>
      {lateAsking && canBeLate && deferral && (
        <div class="overlay" onClick={(e: Event) => e.target === e.currentTarget && setLateAsking(false)}>
          <div role="dialog" aria-modal="true" aria-labelledby="late-title" aria-describedby="late-text">
            <h2 id="late-title">{t.lateTitle}</h2>
            <p id="late-text">{t.lateHint}</p>
            <div class="late-choices" role="group" aria-labelledby="late-title">
              {lateChoices(deferral.maxMinutes).map((m) => (
                <button type="button" class="primary" data-late-minutes={m} onClick={() => void runningLate(m)} disabled={busy}>
                  {t.lateMinutes(m)}
                </button>
              ))}
            </div>
            <div class="actions">
              <button type="button" onClick={() => setLateAsking(false)} autofocus>
                {t.cancel}
              </button>
            </div>
          </div>
        </div>
      )}
      {asking && ticket.status === "waiting" && (
        <div class="overlay" onClick={(e: Event) => e.target === e.currentTarget && setAsking(false)}>
          <div role="dialog" aria-modal="true" aria-labelledby="step-title" aria-describedby="step-text">
            <h2 id="step-title">{t.confirmStepBackTitle}</h2>
            <p id="step-text">{t.confirmStepBack}</p>
            <div class="actions">
              <button type="button" onClick={() => setAsking(false)} autofocus>
                {t.cancel}
              </button>
              <button type="button" class="primary" onClick={stepBack} disabled={busy}>
                {t.confirmStepBackYes}
              </button>
            </div>
          </div>
        </div>
      )}
    </div>
  );
}

render(<App />, document.getElementById("app")!);
