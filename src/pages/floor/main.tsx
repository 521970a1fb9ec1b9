// The floor view (/console/floor), a supervisor's page: the branch, per desk the operator and the
// ticket at it, per queue its line (names, waits, VIP and appointment marks) against the queue's
// target wait, today's averages and no-shows, and the staff alert (a wait past the target while a
// desk is idle). From GET /v1/locations/{locationId}/floor; live: a queue_update of any of the
// location's queues is the signal to read the floor again, and a one-second tick re-judges the
// waits on the page's clock (src/domain/floor-alerts.ts), since time passing announces nothing.
// Signs in by itself (the console's credentials), so the printed link works alone.
import { render, useEffect, useLayoutEffect, useRef, useState } from "hono/jsx/dom";
import "../shared/base.css";
import "./floor.css";
import { api, ApiRefusal, defaultHeaders, type Location, type Membership, type Schemas, type User } from "../shared/api";
import { minutes, rememberLang, showLang, signedInLang, since, staffPageLang, type PageLang } from "../shared/i18n";
import { LanguageSelect } from "../shared/language-switch";
import { fillText, type StaffStrings } from "../../domain/languages/catalogue";
import { STAFF_LANGUAGES } from "../../domain/languages/staff.generated";
import { openLive, type LiveState } from "../shared/live";
import { floorAlerts, waitLevel, type WaitLevel } from "../../domain/floor-alerts";

// GET /v1/locations/{locationId}/floor (src/desks/floor.routes.ts).
type Floor = Schemas["Floor"];

// The floor's words, from the catalogue of languages (`staff.floor`, with the console's sign-in
// words): every catalogue language (docs/languages.md).
function floorText(s: StaffStrings) {
  const c = s.console;
  return {
    ...s.floor,
    email: c.email,
    password: c.password,
    signIn: c.signIn,
    badLogin: s.refusals.AUTHENTICATION_ERROR,
    name: c.name,
    waited: c.waited,
    vip: c.vip,
    appointment: c.appointment,
    reconnecting: c.reconnecting,
    live: c.live,
    languages: c.languages,
    levels: { ok: "", ...s.floor.levels } as Record<WaitLevel, string>,
    statusNames: s.floor.statusNames as Record<string, string>,
    alert: (code: string, waited: string, desks: string) => fillText(s.floor.alert, { code, waited, desks }),
  };
}

const TEXT = Object.fromEntries(Object.entries(STAFF_LANGUAGES).map(([code, l]) => [code, floorText(l.staff)])) as Record<
  PageLang,
  ReturnType<typeof floorText>
>;

type Text = (typeof TEXT)["en"];

function SignIn({ t, onDone }: { t: Text; onDone: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await api("POST", "/auth/login", { body: { email: String(form.get("email")), password: String(form.get("password")) } });
      onDone();
    } catch (err) {
      setError(err instanceof ApiRefusal && err.status === 401 ? t.badLogin : String((err as Error).message));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="signin card" aria-labelledby="signin-title">
      <h2 id="signin-title">{t.signInTitle}</h2>
      <form onSubmit={submit}>
        <label>
          {t.email}
          <input name="email" type="email" autocomplete="username" required autofocus />
        </label>
        <label>
          {t.password}
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
        <button class="primary" type="submit" disabled={busy}>
          {t.signIn}
        </button>
      </form>
    </section>
  );
}

const duration = (seconds: number | null, lang: PageLang) => (seconds === null ? "—" : minutes(seconds / 60, lang));

function App() {
  const [lang, setLang] = useState<PageLang>(staffPageLang());
  // The document speaks the page's language, right to left in Arabic, from the first screen (sign-in) on.
  // Before the paint, with the words of the same render: the page never shows one language under another's lang.
  useLayoutEffect(() => showLang(lang), [lang]);
  const t = TEXT[lang];
  const [phase, setPhase] = useState<"loading" | "signin" | "floor">("loading");
  const [locations, setLocations] = useState<Location[]>([]);
  const [locationId, setLocationId] = useState("");
  const [floor, setFloor] = useState<Floor | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [live, setLive] = useState<LiveState>("connecting");
  const [clock, setClock] = useState(Date.now());
  // The server's clock minus the page's, at the last read: waits are judged on the server's time.
  const [offset, setOffset] = useState(0);
  const reading = useRef({ busy: false, again: false, locationId: "" });

  const read = async () => {
    const loc = reading.current.locationId;
    if (!loc) return;
    if (reading.current.busy) {
      reading.current.again = true;
      return;
    }
    reading.current.busy = true;
    try {
      const next = await api<Floor>("GET", `/locations/${loc}/floor`);
      setOffset(Date.parse(next.at) - Date.now());
      setClock(Date.now());
      setFloor(next);
      setError(null);
    } catch (err) {
      setError(
        err instanceof ApiRefusal && err.status === 404 && err.message.startsWith("No route")
          ? TEXT[lang].noRoute
          : String((err as Error).message),
      );
    } finally {
      reading.current.busy = false;
      if (reading.current.again) {
        reading.current.again = false;
        void read();
      }
    }
  };

  const load = async () => {
    try {
      const me = await api<{ user: User; memberships: Membership[] }>("GET", "/auth/me");
      const chosen = signedInLang(me.user.language);
      setLang(chosen);
      rememberLang(chosen);
      if (me.memberships[0]) defaultHeaders["X-Organization-Id"] = me.memberships[0].organizationId;
      const locs = await api<Location[]>("GET", "/business/locations?limit=100");
      setLocations(locs);
      const first = new URLSearchParams(location.search).get("location") ?? locs[0]?.id ?? "";
      reading.current.locationId = first;
      setLocationId(first);
      setPhase("floor");
      await read();
    } catch (err) {
      if (err instanceof ApiRefusal && (err.status === 401 || err.status === 403)) setPhase("signin");
      else setError(String((err as Error).message));
    }
  };

  useEffect(() => {
    void load();
    const timer = setInterval(() => setClock(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  const queueIds = floor?.queues.map((q) => q.id).join(",") ?? "";
  useEffect(() => {
    if (!queueIds) return;
    const channel = openLive({
      subscriptions: () => queueIds.split(",").map((queueId) => ({ action: "subscribe", queueId })),
      onMessage: (m) => m.type === "queue_update" && void read(),
      onOpen: () => void read(),
      onState: setLive,
    });
    return () => channel.close();
  }, [queueIds]);

  const switchLang = (next: PageLang) => {
    setLang(next);
    rememberLang(next);
  };

  const at = clock + offset;
  const waitedNow = (joinedAt: string) => Math.max(0, Math.floor((at - Date.parse(joinedAt)) / 1000));
  const alerts = floor
    ? floorAlerts(
        floor.queues.map((q) => {
          const oldest = q.waiting.reduce<(typeof q.waiting)[number] | null>(
            (min, w) => (min === null || Date.parse(w.joinedAt) < Date.parse(min.joinedAt) ? w : min),
            null,
          );
          return {
            id: q.id,
            targetWaitMinutes: q.targetWaitMinutes,
            longest: oldest ? { ticketId: oldest.ticketId, displayCode: oldest.displayCode, joinedAt: Date.parse(oldest.joinedAt) } : null,
          };
        }),
        floor.desks.map((d) => ({ id: d.id, name: d.name, open: d.status === "open", busy: d.current !== null, queueIds: d.queueIds })),
        at,
      )
    : [];

  return (
    <div>
      <header class="bar">
        <h1>
          {t.title}
          {floor && <span class="branch"> · {floor.location.name}</span>}
        </h1>
        <span class="spacer" />
        {floor && (
          <span class={`live ${live === "offline" ? "offline" : ""}`} role="status">
            {live === "offline" ? t.reconnecting : t.live}
          </span>
        )}
        <a class="barlink" href="/console">
          {t.console}
        </a>
        <LanguageSelect lang={lang} label={t.languages} onPick={switchLang} />
      </header>
      <div class="floor">
        {phase === "signin" && <SignIn t={t} onDone={() => void load()} />}
        {floor && <p class="address">{floor.location.address}</p>}
        {locations.length > 1 && (
          <label class="pick-location">
            {t.location}
            <select
              value={locationId}
              onChange={(e: Event) => {
                const id = (e.target as HTMLSelectElement).value;
                reading.current.locationId = id;
                setLocationId(id);
                void read();
              }}
            >
              {locations.map((l) => (
                <option value={l.id}>{l.name}</option>
              ))}
            </select>
          </label>
        )}
        {error && (
          <p class="notice error" role="alert">
            {error}
          </p>
        )}
        {alerts.length > 0 && (
          <div class="alerts" role="alert" data-alerts>
            {alerts.map((a) => (
              <p class="notice alert" data-alert={a.queueId}>
                {t.alert(a.displayCode, minutes(Math.floor(a.waitedSeconds / 60), lang), a.idleDesks.map((d) => d.name).join(", "))}
              </p>
            ))}
          </div>
        )}
        {floor && (
          <>
            {floor.queues.map((q) => {
              const longest = q.waiting.reduce((max, w) => Math.max(max, waitedNow(w.joinedAt)), 0);
              const level = q.waiting.length > 0 ? waitLevel(longest, q.targetWaitMinutes) : "ok";
              return (
                <section class={`card queue level-${level}`} aria-labelledby={`q-${q.id}`} data-queue={q.id} data-level={level}>
                  <h2 id={`q-${q.id}`}>
                    <span class="letter">{q.letter}</span> {q.name}
                    {level !== "ok" && <span class={`badge ${level}`}>{t.levels[level]}</span>}
                  </h2>
                  <dl class="stats">
                    <div>
                      <dt>{t.waiting}</dt>
                      <dd>{q.waitingCount}</dd>
                    </div>
                    <div>
                      <dt>{t.longest}</dt>
                      <dd>{q.waiting.length > 0 ? minutes(longest / 60, lang) : "—"}</dd>
                    </div>
                    <div>
                      <dt>{t.target}</dt>
                      <dd>{q.targetWaitMinutes === null ? t.noTarget : minutes(q.targetWaitMinutes, lang)}</dd>
                    </div>
                    <div>
                      <dt>{t.avgWait}</dt>
                      <dd>{duration(q.today.averageWaitSeconds, lang)}</dd>
                    </div>
                    <div>
                      <dt>{t.avgService}</dt>
                      <dd>{duration(q.today.averageServiceSeconds, lang)}</dd>
                    </div>
                    <div>
                      <dt>{t.servedToday}</dt>
                      <dd>{q.today.served}</dd>
                    </div>
                    <div>
                      <dt>{t.noShows}</dt>
                      <dd>{q.today.noShows}</dd>
                    </div>
                    <div>
                      <dt>{t.held}</dt>
                      <dd>{q.heldCount}</dd>
                    </div>
                  </dl>
                  {q.waiting.length === 0 ? (
                    <p class="muted">{t.nobody}</p>
                  ) : (
                    <table>
                      <caption class="sr-only">{`${t.line} ${q.letter}`}</caption>
                      <thead>
                        <tr>
                          <th scope="col">{t.code}</th>
                          <th scope="col">{t.name}</th>
                          <th scope="col">{t.waited}</th>
                          <th scope="col">{t.marks}</th>
                        </tr>
                      </thead>
                      <tbody>
                        {q.waiting.map((w) => {
                          const waited = waitedNow(w.joinedAt);
                          const l = waitLevel(waited, q.targetWaitMinutes);
                          return (
                            <tr class={`level-${l}`} data-ticket={w.ticketId} data-level={l}>
                              <th scope="row">
                                <span data-code="">{w.displayCode}</span>
                              </th>
                              <td>{w.name ?? "—"}</td>
                              <td>
                                {minutes(waited / 60, lang)}
                                {l !== "ok" && <span class={`badge ${l}`}>{t.levels[l]}</span>}
                              </td>
                              <td>
                                {w.vip && <span class="mark vip">{t.vip}</span>}
                                {w.appointmentAt && <span class="mark appointment">{t.appointment}</span>}
                              </td>
                            </tr>
                          );
                        })}
                      </tbody>
                    </table>
                  )}
                </section>
              );
            })}
            <section class="card" aria-labelledby="desks-title">
              <h2 id="desks-title">{t.desks}</h2>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t.desk}</th>
                    <th scope="col">{t.operator}</th>
                    <th scope="col">{t.serving}</th>
                    <th scope="col">{t.forHowLong}</th>
                  </tr>
                </thead>
                <tbody>
                  {floor.desks.map((d) => (
                    <tr class={d.status === "closed" ? "closed" : ""}>
                      <th scope="row">{d.name}</th>
                      <td>{d.status === "closed" ? t.closed : (d.operator?.name ?? "—")}</td>
                      <td>
                        {d.current ? (
                          <>
                            <span data-code="">{d.current.displayCode}</span> · {t.statusNames[d.current.status] ?? d.current.status}
                          </>
                        ) : d.status === "open" ? (
                          t.idle
                        ) : (
                          "—"
                        )}
                      </td>
                      <td>{d.current ? minutes(since(d.current.since, at), lang) : "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          </>
        )}
      </div>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
