// The counter console (/console): sign in, take a desk, then work its queues from the keyboard.
// Live: the widget socket signals a change of any of the desk's queues and the console reads the
// lists again over REST (docs/pages.md); no polling, no reload.
import { render, useEffect, useRef, useState } from "hono/jsx/dom";
import "../shared/base.css";
import "./console.css";
import {
  api,
  ApiRefusal,
  defaultHeaders,
  type Schemas,
  type Desk,
  type Location,
  type Membership,
  type Queue,
  type ServiceOutcome,
  type Ticket,
  type User,
} from "../shared/api";
import { minutes, rememberLang, since, browserLang, type Lang } from "../shared/i18n";
import { openLive, type LiveState } from "../shared/live";
import { REFUSALS, TEXT, type ConsoleText } from "./i18n";
import { joinRefusal } from "../shared/refusals";
import { WalkInForm, type WalkIn, type WalkInRefusal } from "./walk-in";

type Me = { user: User; memberships: Membership[] };
type Member = Schemas["Member"];
type IntakeField = Schemas["IntakeField"];
type Dialog = null | { kind: "complete" } | { kind: "previous"; ticket: Ticket } | { kind: "transfer" } | { kind: "walkin" };
type Notice = { kind: "error" | "ok" | "info"; text: string } | null;

function refusalText(err: unknown, lang: Lang): string {
  if (err instanceof ApiRefusal) {
    const reason = typeof err.details.reason === "string" ? err.details.reason : null;
    return (reason && REFUSALS[lang][reason]) || REFUSALS[lang][err.code] || err.message || err.code;
  }
  return String(err);
}

function Key({ k }: { k: string }) {
  return <kbd aria-hidden="true">{k}</kbd>;
}

function SignIn({ t, onDone, lang }: { t: ConsoleText; lang: Lang; onDone: () => void }) {
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
      setError(refusalText(err, lang));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="signin card" aria-labelledby="signin-title">
      <h1 id="signin-title">{t.title}</h1>
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

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [phase, setPhase] = useState<"loading" | "signin" | "pick" | "desk">("loading");
  const [lang, setLang] = useState<Lang>(browserLang());
  const t = TEXT[lang];
  const [locations, setLocations] = useState<Location[]>([]);
  const [locationId, setLocationId] = useState<string>("");
  const [desks, setDesks] = useState<Desk[]>([]);
  const [desk, setDesk] = useState<Desk | null>(null);
  const [queues, setQueues] = useState<Queue[]>([]);
  const [allQueues, setAllQueues] = useState<Queue[]>([]);
  const [colleagues, setColleagues] = useState<Member[]>([]);
  const [serviceNames, setServiceNames] = useState<Record<string, string>>({});
  const [outcomes, setOutcomes] = useState<Record<string, ServiceOutcome[]>>({});
  // The services' intake questions, read once per service when the desk opens: the card labels the answers with them.
  const [questions, setQuestions] = useState<Record<string, IntakeField[]>>({});
  const [waiting, setWaiting] = useState<Ticket[]>([]);
  const [held, setHeld] = useState<Ticket[]>([]);
  const [current, setCurrent] = useState<Ticket | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [live, setLive] = useState<LiveState>("connecting");
  const [dialog, setDialog] = useState<Dialog>(null);
  const [busy, setBusy] = useState(false);
  const [clock, setClock] = useState(Date.now());
  const state = useRef({ desk: null as Desk | null, me: null as Me | null, refreshing: false, again: false });

  const fail = (err: unknown) => setNotice({ kind: "error", text: refusalText(err, lang) });

  // ---- who is there
  const loadMe = async () => {
    try {
      const found = await api<Me>("GET", "/auth/me");
      setMe(found);
      state.current.me = found;
      const chosen = found.user.language === "fr" ? "fr" : "en";
      setLang(chosen);
      rememberLang(chosen);
      const membership = found.memberships[0];
      if (!membership) {
        setNotice({ kind: "error", text: TEXT[chosen].noOrg });
        setPhase("pick");
        return;
      }
      defaultHeaders["X-Organization-Id"] = membership.organizationId;
      const locs = await api<Location[]>("GET", "/business/locations?limit=100");
      setLocations(locs);
      const first = locs[0]?.id ?? "";
      setLocationId(first);
      if (first) await loadDesks(first, found);
      else setPhase("pick");
    } catch (err) {
      if (err instanceof ApiRefusal && err.status === 401) setPhase("signin");
      else {
        fail(err);
        setPhase("signin");
      }
    }
  };

  const loadDesks = async (loc: string, who: Me | null = state.current.me) => {
    const list = await api<Desk[]>("GET", `/locations/${loc}/desks?limit=100`);
    setDesks(list);
    const mine = list.find((d) => d.status === "open" && d.operatorId === who?.user.id);
    if (mine) await enterDesk(mine);
    else setPhase("pick");
  };

  const enterDesk = async (d: Desk) => {
    state.current.desk = d;
    setDesk(d);
    const [qs, all] = await Promise.all([
      Promise.all(d.queueIds.map((id) => api<Queue>("GET", `/queues/${id}`).catch(() => null))),
      api<Queue[]>("GET", "/business/queues?limit=100").catch(() => [] as Queue[]),
    ]);
    const deskQueues = qs.filter((q): q is Queue => q !== null);
    const org = defaultHeaders["X-Organization-Id"];
    if (org)
      api<Member[]>("GET", `/organizations/${org}/members?limit=100`)
        .then((list) => setColleagues(list.filter((m) => m.userId !== state.current.me?.user.id)))
        .catch(() => setColleagues([]));
    setQueues(deskQueues);
    setAllQueues(all);
    const serviceIds = [...new Set(deskQueues.map((q) => q.serviceId))];
    const names: Record<string, string> = {};
    const outs: Record<string, ServiceOutcome[]> = {};
    const asks: Record<string, IntakeField[]> = {};
    await Promise.all(
      serviceIds.map(async (id) => {
        const [service, list, intake] = await Promise.all([
          api<{ name: string }>("GET", `/services/${id}`).catch(() => null),
          api<ServiceOutcome[]>("GET", `/services/${id}/outcomes`).catch(() => [] as ServiceOutcome[]),
          api<Schemas["ServiceIntake"]>("GET", `/services/${id}/intake`).catch(() => null),
        ]);
        if (service) names[id] = service.name;
        outs[id] = list;
        asks[id] = intake?.fields ?? [];
      }),
    );
    setServiceNames(names);
    setOutcomes(outs);
    setQuestions(asks);
    setPhase("desk");
    await refresh();
  };

  /** Reads the desk's queues again: waiting lines, held tickets, and the clerk's current ticket. */
  const refresh = async () => {
    const d = state.current.desk;
    const who = state.current.me;
    if (!d || !who) return;
    // One read at a time; a signal arriving meanwhile asks for one more read after it.
    if (state.current.refreshing) {
      state.current.again = true;
      return;
    }
    state.current.refreshing = true;
    try {
      const lists = await Promise.all(
        d.queueIds.flatMap((id) =>
          (["waiting", "called", "serving", "held"] as const).map((status) =>
            api<Ticket[]>("GET", `/queues/${id}/tickets?status=${status}&limit=100`).catch(() => [] as Ticket[]),
          ),
        ),
      );
      const all = lists.flat();
      // One queue: its own order (a ticket returned "first" is called first without being VIP).
      // Across queues the desk calls the priority lane first, then the longest wait (docs/desks.md).
      const byPosition = (a: Ticket, b: Ticket) => (a.position ?? 0) - (b.position ?? 0) || a.createdAt.localeCompare(b.createdAt);
      const line = all
        .filter((x) => x.status === "waiting")
        .sort(d.queueIds.length === 1 ? byPosition : (a, b) => Number(b.isPriority) - Number(a.isPriority) || byPosition(a, b));
      setWaiting(line);
      setHeld(all.filter((x) => x.status === "held"));
      const mine = all.filter((x) => x.assignedToId === who.user.id && (x.status === "called" || x.status === "serving"));
      mine.sort((a, b) => (b.calledAt ?? "").localeCompare(a.calledAt ?? ""));
      setCurrent(mine[0] ?? null);
    } finally {
      state.current.refreshing = false;
      if (state.current.again) {
        state.current.again = false;
        void refresh();
      }
    }
  };

  useEffect(() => {
    void loadMe();
    const timer = setInterval(() => setClock(Date.now()), 15_000);
    return () => clearInterval(timer);
  }, []);

  // ---- live: one socket for the desk's queues
  useEffect(() => {
    if (phase !== "desk" || !desk) return;
    const channel = openLive({
      subscriptions: () => desk.queueIds.map((queueId) => ({ action: "subscribe", queueId })),
      onMessage: (m) => {
        if (m.type === "queue_update") void refresh();
      },
      onOpen: (reconnected) => {
        void refresh();
        if (reconnected) setNotice({ kind: "ok", text: TEXT[lang].resynced });
      },
      onState: (s) => {
        setLive(s);
        if (s === "offline") setNotice({ kind: "info", text: TEXT[lang].reconnecting });
      },
    });
    return () => channel.close();
  }, [phase, desk?.id]);

  // ---- verbs
  const act = async (what: () => Promise<unknown>, done?: (result: unknown) => Notice) => {
    if (busy) return;
    setBusy(true);
    setNotice(null);
    try {
      const result = await what();
      if (done) setNotice(done(result));
      await refresh();
    } catch (err) {
      fail(err);
      await refresh();
    } finally {
      setBusy(false);
    }
  };

  const callNextNow = (previousOutcome?: "served" | "no_show") =>
    act(
      () => api<Ticket>("POST", `/desks/${desk!.id}/call-next`, previousOutcome ? { body: { previousOutcome } } : {}),
      (ticket) => ({ kind: "ok", text: t.called((ticket as Ticket).displayCode, desk!.displayName ?? desk!.name) }),
    );

  const callNext = () => {
    // A customer called but never started: ask what became of them, so the expiry sweep does not
    // count a served customer as a no-show.
    if (current && current.status === "called") return setDialog({ kind: "previous", ticket: current });
    return callNextNow();
  };

  // One request: the desk's call-next closes the never-started call as served or absent, then calls.
  const settlePrevious = async (_ticket: Ticket, outcome: "served" | "absent") => {
    setDialog(null);
    await callNextNow(outcome === "served" ? "served" : "no_show");
  };

  // Any waiting ticket of the desk's queues, not only the current one: the row's own button.
  const markVip = (tk: Ticket, on: boolean) =>
    act(
      () => api<Ticket>(on ? "POST" : "DELETE", `/tickets/${tk.id}/vip`),
      () => ({ kind: "ok", text: on ? t.markedVip(tk.displayCode) : t.unmarkedVip(tk.displayCode) }),
    );

  const verb = (path: string, body?: unknown) =>
    current && act(() => api("POST", `/tickets/${current.id}/${path}`, body === undefined ? {} : { body }));

  const toggleHold = () => {
    if (current) return verb("hold", {});
    const mine = held.find((h) => h.assignedToId === me?.user.id) ?? held[0];
    if (mine) return act(() => api("POST", `/tickets/${mine.id}/resume`, { body: {} }));
  };

  const openDesk = (d: Desk) =>
    act(async () => {
      const opened = await api<Desk>("POST", `/desks/${d.id}/open`);
      await enterDesk(opened);
    });

  const closeDesk = () =>
    act(
      async () => {
        await api("POST", `/desks/${desk!.id}/close`);
        state.current.desk = null;
        setDesk(null);
        setPhase("pick");
        await loadDesks(locationId);
        return null;
      },
      () => ({ kind: "info", text: t.deskClosed }),
    );

  const signOut = async () => {
    await api("POST", "/auth/logout").catch(() => null);
    state.current.desk = null;
    setDesk(null);
    setMe(null);
    setPhase("signin");
  };

  const switchLang = () => {
    const next: Lang = lang === "fr" ? "en" : "fr";
    setLang(next);
    rememberLang(next);
  };

  const can = {
    recall: current?.status === "called",
    serve: current?.status === "called",
    complete: current?.status === "serving",
    noShow: current?.status === "called",
    hold: !!current || held.length > 0,
    back: !!current,
    transfer: !!current,
  };

  // ---- keyboard: one letter per verb, shown on its button; never while typing or in a dialog
  const keys = useRef<Record<string, () => unknown>>({});
  keys.current = {
    n: callNext,
    r: () => can.recall && verb("recall"),
    s: () => can.serve && verb("serve"),
    c: () => can.complete && setDialog({ kind: "complete" }),
    a: () => can.noShow && verb("skip-absent", { reason: "absent" }),
    h: () => can.hold && toggleHold(),
    f: () => can.back && verb("return", { position: "first" }),
    l: () => can.back && verb("return", { position: "last" }),
    t: () => can.transfer && setDialog({ kind: "transfer" }),
    w: () => setDialog({ kind: "walkin" }),
  };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (phase !== "desk" || e.ctrlKey || e.metaKey || e.altKey) return;
      const target = e.target as HTMLElement;
      if (dialogOpen.current || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) {
        if (e.key === "Escape") setDialog(null);
        return;
      }
      const run = keys.current[e.key.toLowerCase()];
      if (run) {
        e.preventDefault();
        run();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [phase]);
  const dialogOpen = useRef(false);
  dialogOpen.current = dialog !== null;

  // ---- screens
  const bar = (
    <header class="bar">
      <h1>{desk ? `${t.title} — ${desk.displayName ?? desk.name}` : t.title}</h1>
      <span class="spacer" />
      {phase === "desk" && (
        <span class={`live ${live === "offline" ? "offline" : ""}`} role="status" data-live={live}>
          {live === "offline" ? t.reconnecting : t.live}
        </span>
      )}
      {me && <span>{me.user.firstName}</span>}
      <button type="button" onClick={switchLang} lang={lang === "fr" ? "en" : "fr"}>
        {t.language}
      </button>
      {me && me.memberships.some((m) => m.role !== "operator") && (
        <a class="barlink" href="/console/floor">
          {t.floor}
        </a>
      )}
      {me && (
        <button type="button" onClick={signOut}>
          {t.signOut}
        </button>
      )}
    </header>
  );

  if (phase === "loading") return <div>{bar}</div>;
  if (phase === "signin")
    return (
      <div>
        {bar}
        <SignIn t={t} lang={lang} onDone={() => void loadMe()} />
      </div>
    );

  const noticeView = notice && (
    <p
      class={`notice ${notice.kind === "error" ? "error" : notice.kind === "ok" ? "ok" : ""}`}
      role={notice.kind === "error" ? "alert" : "status"}
    >
      {notice.text}
    </p>
  );

  if (phase === "pick")
    return (
      <div>
        {bar}
        <section class="pick card" aria-labelledby="pick-title">
          <h2 id="pick-title">{t.chooseDesk}</h2>
          {locations.length > 1 && (
            <label>
              {t.location}
              <select
                value={locationId}
                onChange={(e: Event) => {
                  const id = (e.target as HTMLSelectElement).value;
                  setLocationId(id);
                  void loadDesks(id);
                }}
              >
                {locations.map((l) => (
                  <option value={l.id}>{l.name}</option>
                ))}
              </select>
            </label>
          )}
          {noticeView}
          {desks.length === 0 && <p class="muted">{t.noDesk}</p>}
          <ul class="desks">
            {desks.map((d) => {
              const taken = d.status === "open" && d.operatorId !== me?.user.id;
              return (
                <li>
                  <button type="button" class="desk" disabled={taken || busy} onClick={() => openDesk(d)}>
                    <strong>{d.displayName ?? d.name}</strong>
                    <span class="muted">{taken ? t.openedBy : t.open}</span>
                  </button>
                </li>
              );
            })}
          </ul>
        </section>
      </div>
    );

  const queueName = (id: string) => queues.find((q) => q.id === id)?.name ?? allQueues.find((q) => q.id === id)?.name ?? id;
  const serviceOf = (tk: Ticket) => serviceNames[tk.serviceId] ?? "";
  /** The intake answers with their questions' labels in the clerk's language; a choice shows its option's label. */
  const answersOf = (tk: Ticket) =>
    Object.entries(tk.intake ?? {}).map(([key, value]) => {
      const field = (questions[tk.serviceId] ?? []).find((f) => f.key === key);
      const option = field?.options?.find((o) => o.value === value);
      const shown = option !== undefined ? option.label[lang] : typeof value === "boolean" ? (value ? t.yes : t.no) : String(value);
      return { key, label: field?.label[lang] ?? key, shown };
    });
  const marks = (tk: Ticket) => (
    <>
      {/* A VIP ticket, created so or marked at the counter; a transfer sent to the front is "priority". */}
      {tk.isPriority && tk.source !== "transfer" && <span class="mark vip">{t.vip}</span>}
      {tk.isPriority && tk.source === "transfer" && <span class="mark vip">{t.priority}</span>}
    </>
  );
  const Btn = (p: { k: string; label: string; on: () => unknown; enabled: boolean; kind?: string }) => (
    <button type="button" class={p.kind ?? ""} disabled={!p.enabled || busy} onClick={() => p.on()} aria-keyshortcuts={p.k.toUpperCase()}>
      {p.label}
      <Key k={p.k.toUpperCase()} />
    </button>
  );

  return (
    <div class="desk-screen">
      {bar}
      <div class="layout">
        <section class="current card" aria-labelledby="current-title">
          <h2 id="current-title">{t.current}</h2>
          {current ? (
            <div class="ticket" data-ticket={current.id}>
              <p class="code">
                {current.displayCode}
                {marks(current)}
              </p>
              <dl>
                <dt>{t.status}</dt>
                <dd>{t.statusNames[current.status]}</dd>
                {current.visitorName && (
                  <>
                    <dt>{t.name}</dt>
                    <dd>{current.visitorName}</dd>
                  </>
                )}
                <dt>{t.service}</dt>
                <dd>
                  {serviceOf(current)} · {queueName(current.queueId)}
                </dd>
                <dt>{t.waited}</dt>
                <dd>{minutes((Date.parse(current.calledAt ?? current.createdAt) - Date.parse(current.createdAt)) / 60_000, lang)}</dd>
                <dt>{t.recalls}</dt>
                <dd>{current.recallCount}</dd>
                {current.phoneMasked && (
                  <>
                    <dt>{t.phone}</dt>
                    <dd class="phone" translate="no">
                      {current.phoneMasked}
                    </dd>
                  </>
                )}
                {current.labels.length > 0 && (
                  <>
                    <dt>{t.labels}</dt>
                    <dd class="labels">
                      {current.labels.map((l) => (
                        <span class="mark label">{l}</span>
                      ))}
                    </dd>
                  </>
                )}
                {current.note && (
                  <>
                    <dt>{t.note}</dt>
                    <dd>{current.note}</dd>
                  </>
                )}
              </dl>
              {answersOf(current).length > 0 && (
                <section class="intake" aria-labelledby="intake-title">
                  <h3 id="intake-title">{t.intake}</h3>
                  <dl>
                    {answersOf(current).map((a) => (
                      <>
                        <dt>{a.label}</dt>
                        <dd data-intake={a.key}>{a.shown}</dd>
                      </>
                    ))}
                  </dl>
                </section>
              )}
            </div>
          ) : (
            <p class="muted">{t.noCurrent}</p>
          )}
          <div class="verbs" role="group" aria-label={t.current}>
            <Btn k="n" label={t.callNext} on={callNext} enabled={true} kind="primary big" />
            <Btn k="r" label={t.recall} on={() => verb("recall")} enabled={can.recall} />
            <Btn k="s" label={t.startServing} on={() => verb("serve")} enabled={can.serve} />
            <Btn k="c" label={t.complete} on={() => setDialog({ kind: "complete" })} enabled={can.complete} />
            <Btn k="a" label={t.noShow} on={() => verb("skip-absent", { reason: "absent" })} enabled={can.noShow} kind="danger" />
            <Btn k="h" label={current ? t.hold : t.resume} on={toggleHold} enabled={can.hold} />
            <Btn k="f" label={t.returnFirst} on={() => verb("return", { position: "first" })} enabled={can.back} />
            <Btn k="l" label={t.returnLast} on={() => verb("return", { position: "last" })} enabled={can.back} />
            <Btn k="t" label={t.transfer} on={() => setDialog({ kind: "transfer" })} enabled={can.transfer} />
            <Btn k="w" label={t.walkIn} on={() => setDialog({ kind: "walkin" })} enabled={true} />
          </div>
          {noticeView}
          <p class="muted small">{t.shortcuts}</p>
          <button type="button" class="linkish" onClick={closeDesk} disabled={busy}>
            {t.closeDesk}
          </button>
        </section>
        <section class="line card" aria-labelledby="line-title">
          <h2 id="line-title">
            {t.waiting} <span class="count">{waiting.length}</span>
          </h2>
          {waiting.length === 0 ? (
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
                {waiting.map((tk) => (
                  <tr data-ticket={tk.id}>
                    <td class="code-cell">
                      {tk.displayCode}
                      {marks(tk)}
                    </td>
                    <td>{tk.visitorName ?? "—"}</td>
                    <td>{queues.length > 1 ? `${serviceOf(tk)} · ${queueName(tk.queueId)}` : serviceOf(tk)}</td>
                    <td>{minutes(since(tk.createdAt, clock), lang)}</td>
                    <td class="row-actions">
                      {!tk.isPriority && (
                        <button
                          type="button"
                          class="small"
                          onClick={() => markVip(tk, true)}
                          disabled={busy}
                          aria-label={t.markVip(tk.displayCode)}
                        >
                          {t.vip}
                        </button>
                      )}
                      {tk.isPriority && tk.source !== "transfer" && (
                        <button
                          type="button"
                          class="small undo"
                          onClick={() => markVip(tk, false)}
                          disabled={busy}
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
          <h2 class="sub">
            {t.held} <span class="count">{held.length}</span>
          </h2>
          {held.length === 0 ? (
            <p class="muted">{t.nothingHeld}</p>
          ) : (
            <ul class="held">
              {held.map((tk) => (
                <li>
                  <strong>{tk.displayCode}</strong> <span class="mark held">{t.held}</span> {tk.holdReason ?? ""}{" "}
                  <button type="button" onClick={() => act(() => api("POST", `/tickets/${tk.id}/resume`, { body: {} }))} disabled={busy}>
                    {t.resume} {tk.displayCode}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
      {dialog && (
        <DialogView
          dialog={dialog}
          t={t}
          current={current}
          outcomes={current ? (outcomes[current.serviceId] ?? []) : []}
          queues={allQueues.filter((q) => q.id !== current?.queueId)}
          colleagues={colleagues}
          deskQueues={queues}
          onClose={() => setDialog(null)}
          onComplete={(outcome, note) => {
            setDialog(null);
            void verb("complete", { ...(outcome ? { outcome } : {}), ...(note ? { note } : {}) });
          }}
          onPrevious={settlePrevious}
          onTransfer={(target, prioritize) => {
            setDialog(null);
            // "usr_…" hands the customer to a colleague (same ticket); a queue id moves the ticket to that queue.
            if (target.startsWith("usr_")) void verb("transfer", { targetOperatorId: target });
            else void verb("transfer-queue", { targetQueueId: target, prioritize });
          }}
          questions={questions}
          lang={lang}
          onWalkIn={async ({ queueId, vip, body }) => {
            // The dialog stays open on a refusal, with the refusal under the input at fault.
            try {
              const tk = await api<Ticket>("POST", `/queues/${queueId}/${vip ? "vip-ticket" : "operator-join"}`, { body });
              setDialog(null);
              setNotice({ kind: "ok", text: t.walkInAdded(tk.displayCode) });
              await refresh();
              return null;
            } catch (err) {
              if (err instanceof ApiRefusal && err.code === "VALIDATION_ERROR")
                return joinRefusal(err, lang, questions[queues.find((q) => q.id === queueId)?.serviceId ?? ""]);
              return { field: null, text: refusalText(err, lang) };
            }
          }}
        />
      )}
    </div>
  );
}

function DialogView(p: {
  dialog: NonNullable<Dialog>;
  t: ConsoleText;
  current: Ticket | null;
  outcomes: ServiceOutcome[];
  queues: Queue[];
  colleagues: Member[];
  deskQueues: Queue[];
  onClose: () => void;
  onComplete: (outcome: string, note: string) => void;
  onPrevious: (ticket: Ticket, outcome: "served" | "absent") => void;
  onTransfer: (queueId: string, prioritize: boolean) => void;
  questions: Record<string, IntakeField[]>;
  lang: Lang;
  onWalkIn: (walkIn: WalkIn) => Promise<WalkInRefusal>;
}) {
  const { t, dialog } = p;
  const first = useRef<HTMLElement | null>(null);
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
  } else {
    title = t.walkIn;
    body = <WalkInForm t={t} lang={p.lang} queues={p.deskQueues} questions={p.questions} onCancel={p.onClose} onSubmit={p.onWalkIn} />;
  }
  void first;
  return (
    <div class="overlay" onClick={(e: Event) => e.target === e.currentTarget && p.onClose()}>
      <div role="dialog" aria-modal="true" aria-labelledby="dialog-title">
        <h2 id="dialog-title">{title}</h2>
        {body}
      </div>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
