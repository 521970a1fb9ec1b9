/*! Queue widget: the display board (loaded by embed.js for type "board", or first by the board page). See docs/display-board.md. */
(() => {
  "use strict";
  // ---- display board: its own strings and styles (legible at 3 m on 1080p, landscape or portrait)
  const TB = {
    en: {
      goTo: "→ {counter}",
      noCall: "No one called right now",
      say: "Ticket {code}, {counter}",
      sayCode: "Ticket {code}",
      closed: "Closed",
      reopens: "We reopen at {time}",
      appointment: "Appointment",
      noVoice: "No voice for {languages} on this screen: those calls are shown, not said.",
    },
    fr: {
      goTo: "→ {counter}",
      noCall: "Aucun appel en cours",
      say: "Numéro {code}, {counter}",
      sayCode: "Numéro {code}",
      closed: "Fermé",
      reopens: "Réouverture à {time}",
      appointment: "Rendez-vous",
      noVoice: "Aucune voix pour {languages} sur cet écran : ces appels sont affichés, pas annoncés.",
    },
  };
  // A French counter label that names a place reads "au guichet 3"; a first name is said as it is.
  const FR_PLACE = /^(guichet|bureau|comptoir|poste|box|stand)\b/i;
  /** "A-042" is said "A 42": the letter, then the number without its zeros. */
  const spokenCode = (code) => String(code).replace(/^([A-Za-z]+)-0*(\d+)$/, "$1 $2");
  function spokenCall(lang, b, c) {
    const code = spokenCode(c.displayCode);
    if (!c.counter) return b.sayCode.replace("{code}", code);
    const counter = lang === "fr" && FR_PLACE.test(c.counter) ? `au ${c.counter.charAt(0).toLowerCase()}${c.counter.slice(1)}` : c.counter;
    return b.say.replace("{code}", code).replace("{counter}", counter);
  }
  const BOARD_CSS = `.qw.board{display:flex;flex-direction:column;height:100vh;padding:2.5vmin 3.5vmin;font-size:3vmin}
.qw.board.kiosk{height:100vh;overflow:hidden;cursor:none}
.board .body{display:flex;flex-direction:column;gap:2.5vmin;flex:1;min-height:0;overflow:hidden}
.bhd{display:flex;align-items:center;gap:3vmin;padding-bottom:1.5vmin;border-bottom:.4vmin solid var(--bd)}
.blogo{height:8vmin;max-width:30vmin;object-fit:contain;border-radius:1vmin}
.borg{flex:1;margin:0;font-size:4.6vmin;font-weight:700;line-height:1.1}.bloc{display:block;font-size:3.2vmin;font-weight:600;color:var(--mut)}
.bclock{text-align:end;white-space:nowrap}.bt{display:block;font-size:6.5vmin;font-weight:700;font-variant-numeric:tabular-nums;line-height:1}
.bd{font-size:2.6vmin;color:var(--mut)}
.board .grid{--k:1;flex:1;min-height:0;display:grid;grid-template-columns:repeat(var(--cols,1),minmax(0,1fr));grid-auto-rows:minmax(0,1fr);gap:2.5vmin}
.board .grid[data-count="1"]{--k:1.5}.board .grid[data-count="2"]{--k:1.15}.board .grid[data-count="3"]{--k:.9}.board .grid[data-count="4"]{--k:.85}
.board .grid[data-count="5"],.board .grid[data-count="6"]{--k:.72}.board .grid[data-count="7"],.board .grid[data-count="8"]{--k:.6}
.board .q{display:flex;flex-direction:column;gap:calc(1.8vmin*var(--k,1));padding:calc(2.2vmin*var(--k,1)) 2.5vmin;border:.3vmin solid var(--bd);border-radius:2vmin;min-height:0;overflow:hidden}
.qh{display:flex;align-items:center;gap:2vmin;flex-wrap:wrap}.board h2{font-size:calc(4.6vmin*var(--k,1));margin:0;flex:1;line-height:1.1;min-width:min(30vmin,100%)}
.board .badge{font-size:calc(2.6vmin*var(--k,1));padding:.5vmin 2vmin}
.bstats{display:flex;gap:calc(4vmin*var(--k,1));text-align:end;white-space:nowrap}.board .big{font-size:calc(5vmin*var(--k,1))}.board .lbl{font-size:calc(2.6vmin*var(--k,1));letter-spacing:.05em}
.calls{display:flex;flex-direction:column;gap:1.5vmin;flex:1;justify-content:center;min-height:0}.board .nx{margin-top:auto}
.board .call{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;column-gap:3vmin;padding:1.2vmin 3vmin;border-radius:1.5vmin;background:var(--p);color:#fff;margin:0}
.board .call .c{direction:ltr;unicode-bidi:isolate;font-size:calc(11vmin*var(--k,1));font-weight:800;line-height:1.05;font-variant-numeric:tabular-nums;white-space:nowrap;flex-shrink:0}
.board .call .w{flex:1 0 auto;max-width:100%;font-size:calc(5vmin*var(--k,1));font-weight:700;text-align:end;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.board .apt{font-size:calc(3vmin*var(--k,1));font-weight:700;padding:.3vmin 1.5vmin;border:.3vmin solid currentColor;border-radius:1vmin;white-space:nowrap}
.board .call.old{background:none;color:var(--fg);border:.3vmin solid var(--bd)}.board .call.old .c{font-size:calc(6vmin*var(--k,1))}.board .call.old .w{font-size:calc(3.8vmin*var(--k,1))}
.empty{margin:0;padding:calc(3vmin*var(--k,1));font-size:calc(3.6vmin*var(--k,1));color:var(--mut);text-align:center;border:.3vmin dashed var(--bd);border-radius:1.5vmin}
.empty.all{flex:1;display:flex;align-items:center;justify-content:center;font-size:5vmin;border:0}
.nx{display:flex;flex-wrap:wrap;align-items:center;gap:1.5vmin}.board .codes{gap:1.2vmin;margin:0}.board .code{font-size:calc(3.6vmin*var(--k,1));padding:.2vmin 1.2vmin;border-width:.3vmin}
.board .snd{font-size:2.5vmin;padding:1.5vmin 3vmin}
.board .novoice{align-self:flex-start;margin:1.5vmin 0 0;padding:1vmin 2vmin;border-radius:1vmin;font-size:2.4vmin;background:#fef3c7;color:#78350f}
.board .desks{flex:1;display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,34vmin),1fr));gap:2.5vmin;align-content:center}
.board .desk{display:flex;flex-direction:column;align-items:center;justify-content:center;gap:2vmin;padding:4vmin 2vmin;border:.3vmin solid var(--bd);border-radius:2vmin;text-align:center;min-height:42vmin}
.board .desk h2{flex:0;min-width:0;font-size:5.5vmin}
.board .desk{container-type:inline-size}.board .desk .c{direction:ltr;unicode-bidi:isolate;font-size:min(13vmin,26cqi);font-weight:800;line-height:1;white-space:nowrap;font-variant-numeric:tabular-nums}
.board .desk .qn{font-size:3vmin;color:var(--mut)}
.board .desk.new{background:var(--p);color:#fff;border-color:var(--p)}.board .desk.new .qn{color:#fff}
.board .closed{flex:1;display:flex;flex-direction:column;align-items:center;justify-content:center;gap:3vmin;text-align:center}
.board .closed h2{flex:0;font-size:14vmin;margin:0}.board .closed p{margin:0;font-size:5vmin;color:var(--mut)}
@media (orientation:portrait){.board .grid{grid-template-columns:repeat(var(--pcols,1),minmax(0,1fr))}.bhd{flex-wrap:wrap}}`;

  window.QueueWidgetBoard = function board(kit) {
    const { o, t, el, fmt, enc, api, live, chime, errorText, host, root, box, body, announce, showError, instance } = kit;
    const b = Object.assign({}, TB.en, TB[o.language], o.strings);
    box.classList.add(o.kiosk ? "kiosk" : "attended");
    const style = el("style", {}, BOARD_CSS);
    root.insertBefore(style, box);
    const seen = new Set();
    // Spoken calls (docs/display-board.md): after the chime, one utterance at a time, in the
    // order of the calls; a call arriving while one is spoken waits for it to end (never cut).
    const speech = o.sound && o.voice && window.speechSynthesis && window.SpeechSynthesisUtterance ? window.speechSynthesis : null;
    // Each call is said once per voice, in order (up to three languages, docs/display-board.md),
    // after a single chime; without `voices` in the board's own language.
    const voices = o.voices || [{ language: o.language, name: o.language, locale: o.locale, say: b.say, sayCode: b.sayCode }];
    const CHIME_MS = 800;
    const spoken = [];
    let speaking = false,
      chimedAt = 0,
      // The voices' languages this device has no voice for (known once the engine lists its voices).
      mute = new Set(),
      noVoice = null;
    const primary = (tag) =>
      String(tag || "")
        .toLowerCase()
        .split(/[-_]/)[0];
    function checkVoices() {
      if (!speech || typeof speech.getVoices !== "function") return;
      let list = [];
      try {
        list = speech.getVoices() || [];
      } catch {
        list = [];
      }
      // An engine that lists no voice yet may still be loading them (voiceschanged comes later).
      if (!list.length) return;
      const have = new Set(list.map((v) => primary(v.lang)));
      mute = new Set(voices.filter((v) => !have.has(primary(v.locale))).map((v) => v.locale));
      const missing = voices.filter((v) => mute.has(v.locale));
      if (noVoice) noVoice.remove();
      noVoice = missing.length
        ? el(
            "p",
            { class: "novoice", role: "status", "data-no-voice": missing.map((v) => v.language).join(",") },
            fmt(b.noVoice, { languages: missing.map((v) => v.name).join(", ") }),
          )
        : null;
      if (noVoice) box.append(noVoice);
    }
    if (speech) {
      checkVoices();
      if (typeof speech.addEventListener === "function") speech.addEventListener("voiceschanged", checkVoices);
    }
    function speakNext() {
      if (speaking || !spoken.length) return;
      const wait = chimedAt + CHIME_MS - Date.now();
      if (wait > 0) return void setTimeout(speakNext, wait);
      speaking = true;
      const { text, lang } = spoken.shift();
      const u = new window.SpeechSynthesisUtterance(text);
      u.lang = lang;
      u.rate = 0.9;
      let guard = 0;
      const done = () => {
        if (!speaking) return;
        speaking = false;
        clearTimeout(guard);
        speakNext();
      };
      u.onend = done;
      u.onerror = done;
      // An engine with no voice may never end an utterance: the next call must still be said.
      guard = setTimeout(done, 4000 + 120 * text.length);
      try {
        speech.speak(u);
      } catch {
        done();
      }
    }
    /**
     * The voices a call is said in: the ticket's language when the board offers it (and the device
     * can say it), else the board's first voice; a call that names no language, in every voice.
     */
    function voicesFor(c) {
      const audible = voices.filter((v) => !mute.has(v.locale));
      if (!c.language) return audible;
      const own = audible.find((v) => v.language === c.language);
      return own ? [own] : audible.slice(0, 1);
    }
    function say(calls) {
      if (!speech) return;
      calls.forEach((c) => voicesFor(c).forEach((v) => spoken.push({ text: spokenCall(v.language, v, c), lang: v.locale })));
      speakNext();
    }
    // The board's state: the organization from the first load, then each queue as its
    // board_update last said. `skew` turns this device's clock into the server's.
    let org = null,
      place = null,
      openDesks = [],
      zone = "UTC",
      order = [],
      byId = new Map(),
      skew = 0,
      first = true,
      loaded = false,
      ticker = 0;
    const serverNow = () => Date.now() + skew;
    const learnTime = (iso) => {
      const at = Date.parse(iso);
      if (!Number.isNaN(at)) skew = at - Date.now();
    };
    if (o.sound) {
      const audio = kit.audio();
      // A kiosk's browser is started with --autoplay-policy=no-user-gesture-required: audio
      // runs without a touch. Elsewhere browsers start it suspended: offer a button for that
      // (a kiosk without the flag stays silent, and still flashes).
      if (audio && audio.state !== "running") {
        const started = audio.resume().catch(() => undefined);
        if (!o.kiosk) {
          const button = el("button", { type: "button", class: "snd" }, t.sound);
          button.addEventListener("click", () =>
            audio
              .resume()
              .then(() => button.remove())
              .catch(() => undefined),
          );
          box.append(button);
          started.then(() => {
            if (audio.state === "running") button.remove();
          });
        }
      }
    }
    if (o.kiosk && navigator.wakeLock) {
      // Keep the screen on; refused (hidden tab, no permission) is fine.
      const lock = () => navigator.wakeLock.request("screen").catch(() => undefined);
      lock();
      document.addEventListener("visibilitychange", () => {
        if (document.visibilityState === "visible") lock();
      });
    }

    let clockFormat = null,
      dateFormat = null;
    function formats() {
      const locale = o.locale;
      for (const tz of [zone, "UTC"]) {
        try {
          clockFormat = new Intl.DateTimeFormat(locale, { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: tz });
          dateFormat = new Intl.DateTimeFormat(locale, { weekday: "long", day: "numeric", month: "long", timeZone: tz });
          return;
        } catch {
          /* an unknown time zone: UTC */
        }
      }
    }

    function head() {
      const now = new Date(serverNow());
      return el(
        "header",
        { class: "bhd" },
        org && org.logoUrl && el("img", { class: "blogo", src: org.logoUrl, alt: "" }),
        el("h1", { class: "borg" }, org ? org.name : "", place && el("span", { class: "bloc", "data-location": place.id }, place.name)),
        clockFormat &&
          el(
            "div",
            { class: "bclock" },
            el("time", { class: "bt", "data-clock": "" }, clockFormat.format(now)),
            el("div", { class: "bd" }, dateFormat.format(now)),
          ),
      );
    }

    function section(q, fresh) {
      const keep = o.callMinutes * 60000,
        now = serverNow();
      const recent = q.called.filter((c) => now - Date.parse(c.calledAt) < keep).slice(0, 3);
      const calls = recent.map((c, i) => {
        const id = `${q.queueId}|${c.displayCode}|${c.calledAt}`;
        const isNew = !seen.has(id);
        seen.add(id);
        if (isNew && !first) fresh.push(c);
        return el(
          "div",
          { class: `call${i ? " old" : ""}${isNew && !first ? " new" : ""}`, "data-called": c.displayCode },
          el("span", { class: "c" }, c.displayCode),
          c.kind === "appointment" ? el("span", { class: "apt", "data-kind": "appointment" }, b.appointment) : null,
          c.counter ? el("span", { class: "w" }, fmt(b.goTo, { counter: c.counter })) : null,
        );
      });
      const wait = q.waitingCount > 0 && q.estimatedWaitMinutes != null ? fmt(t.min, { n: q.estimatedWaitMinutes }) : "–";
      return el(
        "section",
        { class: "q", "data-queue": q.queueId },
        el(
          "div",
          { class: "qh" },
          el("h2", {}, q.name),
          q.status && q.status !== "active" && el("span", { class: `badge ${q.status}` }, t[q.status] || q.status),
          el(
            "div",
            { class: "bstats" },
            el(
              "div",
              {},
              el("div", { class: "lbl" }, t.waiting),
              el("div", { class: "big", "data-count": "" }, String(q.waitingCount ?? 0)),
            ),
            el("div", {}, el("div", { class: "lbl" }, t.wait), el("div", { class: "big", "data-wait": "" }, wait)),
          ),
        ),
        el("div", { class: "calls" }, calls.length ? calls : el("p", { class: "empty", "data-empty": "" }, b.noCall)),
        q.nextWaiting.length > 0 &&
          el(
            "div",
            { class: "nx" },
            el("span", { class: "lbl" }, t.next),
            el(
              "span",
              { class: "codes" },
              q.nextWaiting.map((c) => el("span", { class: "code" }, c)),
            ),
          ),
      );
    }

    /** layout=desks: one column per counter with its latest call (the counters seen since the board loaded stay). */
    const deskOrder = [];
    function desks(queues, fresh) {
      const latest = new Map();
      for (const q of queues) {
        for (const c of q.called) {
          if (!c.counter) continue;
          const id = `${q.queueId}|${c.displayCode}|${c.calledAt}`;
          if (!seen.has(id)) {
            seen.add(id);
            if (!first) fresh.push(c);
          }
          const known = latest.get(c.counter);
          if (!known || Date.parse(c.calledAt) > Date.parse(known.call.calledAt)) latest.set(c.counter, { call: c, queue: q, id });
        }
      }
      // Every open desk has its column, also before its first call; a counter seen since the board loaded stays.
      for (const counter of [...openDesks, ...latest.keys()]) if (!deskOrder.includes(counter)) deskOrder.push(counter);
      deskOrder.sort((a, b) => a.localeCompare(b, o.language, { numeric: true }));
      if (!deskOrder.length) return el("p", { class: "empty all", "data-empty": "" }, b.noCall);
      const freshIds = new Set(fresh.map((c) => `${c.displayCode}|${c.calledAt}`));
      return el(
        "div",
        { class: "desks", "data-count": String(deskOrder.length) },
        deskOrder.map((counter) => {
          const l = latest.get(counter);
          const isNew = l && freshIds.has(`${l.call.displayCode}|${l.call.calledAt}`);
          return el(
            "section",
            { class: `desk${isNew ? " new" : ""}`, "data-desk": counter },
            el("h2", {}, counter),
            l ? el("span", { class: "c", "data-called": l.call.displayCode }, l.call.displayCode) : el("span", { class: "c" }, "–"),
            l && l.call.kind === "appointment" ? el("span", { class: "apt", "data-kind": "appointment" }, b.appointment) : null,
            l ? el("span", { class: "qn" }, l.queue.name) : null,
          );
        }),
      );
    }

    /** The closure running now on the server's clock (the calendar's, docs/display-board.md), or null. */
    let closures = [];
    function closedNow() {
      const now = serverNow();
      return closures.find((c) => Date.parse(c.start) <= now && now < Date.parse(c.end)) || null;
    }

    /** Columns that fill the screen for one to eight queues: 1, 2, 3, 2×2, 3×2, 4×2 (portrait: 1, then 2). */
    function gridColumns(n) {
      const cols = n <= 3 ? n : n === 4 ? 2 : n <= 6 ? 3 : 4;
      return `--cols:${Math.max(1, cols)};--pcols:${n <= 3 ? 1 : 2}`;
    }

    function render() {
      const fresh = [];
      const queues = order.map((id) => byId.get(id)).filter(Boolean);
      const closure = closedNow();
      const reopen = closure && clockFormat ? fmt(b.reopens, { time: clockFormat.format(new Date(closure.end)) }) : null;
      const main = closure
        ? el("div", { class: "closed", "data-closed": "" }, el("h2", {}, b.closed), reopen && el("p", {}, reopen))
        : !queues.length
          ? el("p", { class: "empty all" }, t.noQueues)
          : o.layout === "desks"
            ? desks(queues, fresh)
            : el(
                "div",
                { class: "grid", "data-count": String(Math.min(queues.length, 8)), style: gridColumns(queues.length) },
                queues.map((q) => section(q, fresh)),
              );
      body.replaceChildren(head(), main);
      first = false;
      if (closure) fresh.length = 0;
      if (fresh.length) {
        chime();
        chimedAt = Date.now();
        say(fresh);
        announce(fresh.map((c) => (c.counter ? fmt(t.called, { code: c.displayCode, where: c.counter }) : c.displayCode)).join(". "));
        fresh.forEach((c) => host.dispatchEvent(new CustomEvent("queuewidget:called", { detail: c })));
      }
    }

    function load(d) {
      if (d.organization) org = d.organization;
      if (d.location !== undefined) place = d.location;
      if (Array.isArray(d.desks)) openDesks = d.desks.map((x) => x.counter);
      if (Array.isArray(d.closures)) closures = d.closures;
      if (d.timeZone && d.timeZone !== zone) {
        zone = d.timeZone;
        clockFormat = null;
      }
      if (!clockFormat) formats();
      learnTime(d.generatedAt);
      const queues = o.queues ? d.queues.filter((q) => o.queues.includes(q.queueId)) : d.queues;
      order = queues.map((q) => q.queueId);
      byId = new Map(queues.map((q) => [q.queueId, q]));
      render();
    }

    async function refresh() {
      try {
        const where = o.locationId ? `?location=${enc(o.locationId)}` : "";
        load(await api(o, "GET", `/v1/widget/organization/${enc(o.organizationId)}/display-board${where}`, null, true));
        loaded = true;
      } catch (e) {
        if (!loaded) showError(errorText(t, e, true));
        return;
      }
      if (!kit.hasChannel() && order.length) {
        // After the first load the socket's board_update carries everything: no more HTTP
        // while it is up (the 30 s poll runs only while it is down).
        const channel = live(
          o,
          (data, type) => {
            if (type !== "board_update" || !byId.has(data.queueId)) return;
            learnTime(data.generatedAt);
            byId.set(data.queueId, data);
            render();
          },
          refresh,
          order[0],
          "board",
        );
        kit.setChannel(channel);
        order.forEach((q) => channel.add(q));
      }
    }

    // The clock and the calls' age move without any update: redraw every 10 s.
    ticker = setInterval(() => {
      if (loaded) render();
    }, 10000);
    // The closures are learnt 24 h ahead: learn them again every hour (one request).
    // (A desks layout reads them every minute: a desk opened meanwhile gets its column.)
    const closuresTicker = setInterval(
      () => {
        if (loaded && kit.hasChannel()) refresh();
      },
      o.layout === "desks" ? 60000 : 3600000,
    );
    const stop = instance.destroy;
    instance.destroy = () => {
      clearInterval(ticker);
      clearInterval(closuresTicker);
      stop();
    };
    refresh();
  };
})();
