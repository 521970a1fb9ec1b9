// The floor view (/console/floor), a supervisor's page: the branch, per desk the operator and the
// ticket at it, per queue its line (names, waits, VIP and appointment marks) against the queue's
// target wait, today's averages and no-shows, and the staff alert (a wait past the target while a
// desk is idle). From GET /v1/locations/{locationId}/floor; live: a queue_update of any of the
// location's queues is the signal to read the floor again, and a one-second tick re-judges the
// waits on the page's clock (src/domain/floor-alerts.ts), since time passing announces nothing.
// Signs in by itself (the console's credentials), so the printed link works alone.
import { render, useEffect, useRef, useState } from "hono/jsx/dom";
import "../shared/base.css";
import "./floor.css";
import { api, ApiRefusal, defaultHeaders, type Location, type Membership, type Schemas, type User } from "../shared/api";
import { browserLang, minutes, rememberLang, since, type Lang } from "../shared/i18n";
import { openLive, type LiveState } from "../shared/live";
import { floorAlerts, waitLevel, type WaitLevel } from "../../domain/floor-alerts";

// GET /v1/locations/{locationId}/floor (src/desks/floor.routes.ts).
type Floor = Schemas["Floor"];

const TEXT = {
  en: {
    title: "Floor",
    console: "Counter console",
    desks: "Desks",
    queues: "Queues",
    desk: "Desk",
    operator: "Operator",
    serving: "Current ticket",
    forHowLong: "For",
    closed: "closed",
    idle: "no customer",
    queue: "Queue",
    waiting: "Waiting",
    longest: "Longest wait",
    held: "On hold",
    servedToday: "Served today",
    location: "Location",
    signInTitle: "Floor — sign in",
    email: "Email",
    password: "Password",
    signIn: "Sign in",
    badLogin: "Wrong email or password.",
    line: "Line",
    code: "Ticket",
    name: "Name",
    waited: "Waited",
    marks: "Marks",
    vip: "VIP",
    appointment: "Appointment",
    nobody: "Nobody is waiting.",
    target: "Target",
    noTarget: "no target",
    avgWait: "Average wait today",
    avgService: "Average service today",
    noShows: "No-shows today",
    levels: { ok: "", amber: "near the target", red: "past the target" } as Record<WaitLevel, string>,
    alert: (code: string, waited: string, desks: string) => `${code} has been waiting ${waited} and ${desks} is idle.`,
    noRoute: "The floor is not available on this server yet.",
    updated: "Updated",
    reconnecting: "Connection lost — reconnecting…",
    live: "Live",
    language: "Français",
    statusNames: { called: "called", serving: "being served", held: "on hold" } as Record<string, string>,
  },
  fr: {
    title: "Vue de l'agence",
    console: "Console du guichet",
    desks: "Guichets",
    queues: "Files",
    desk: "Guichet",
    operator: "Agent",
    serving: "Ticket en cours",
    forHowLong: "Depuis",
    closed: "fermé",
    idle: "aucun client",
    queue: "File",
    waiting: "En attente",
    longest: "Attente la plus longue",
    held: "En suspens",
    servedToday: "Servis aujourd'hui",
    location: "Agence",
    signInTitle: "Vue de l'agence — connexion",
    email: "E-mail",
    password: "Mot de passe",
    signIn: "Se connecter",
    badLogin: "E-mail ou mot de passe incorrect.",
    line: "File d'attente",
    code: "Ticket",
    name: "Nom",
    waited: "Attente",
    marks: "Marques",
    vip: "VIP",
    appointment: "Rendez-vous",
    nobody: "Personne n'attend.",
    target: "Objectif",
    noTarget: "sans objectif",
    avgWait: "Attente moyenne du jour",
    avgService: "Service moyen du jour",
    noShows: "Absents du jour",
    levels: { ok: "", amber: "proche de l'objectif", red: "objectif dépassé" } as Record<WaitLevel, string>,
    alert: (code: string, waited: string, desks: string) => `${code} attend depuis ${waited} et ${desks} est libre.`,
    noRoute: "La vue de l'agence n'est pas encore disponible sur ce serveur.",
    updated: "Mis à jour",
    reconnecting: "Connexion perdue — reconnexion…",
    live: "En direct",
    language: "English",
    statusNames: { called: "appelé", serving: "en cours", held: "en suspens" } as Record<string, string>,
  },
};

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

const duration = (seconds: number | null, lang: Lang) => (seconds === null ? "—" : minutes(seconds / 60, lang));

function App() {
  const [lang, setLang] = useState<Lang>(browserLang());
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
      const asked = new URLSearchParams(location.search).get("lang");
      const chosen: Lang = asked === "fr" || asked === "en" ? asked : me.user.language === "fr" ? "fr" : "en";
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

  const switchLang = () => {
    const next: Lang = lang === "fr" ? "en" : "fr";
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
        <button type="button" onClick={switchLang} lang={lang === "fr" ? "en" : "fr"}>
          {t.language}
        </button>
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
                              <th scope="row">{w.displayCode}</th>
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
                        {d.current
                          ? `${d.current.displayCode} · ${t.statusNames[d.current.status] ?? d.current.status}`
                          : d.status === "open"
                            ? t.idle
                            : "—"}
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
