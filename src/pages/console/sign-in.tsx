// The sign-in form (POST /v1/auth/login): the session cookie is the console's credential.
import { useState } from "hono/jsx/dom";
import type { Lang } from "../shared/i18n";
import { post } from "./client";
import type { ConsoleText } from "./i18n";
import { refusalText } from "./refusal";

export function SignIn({ t, onDone, lang }: { t: ConsoleText; lang: Lang; onDone: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await post("/v1/auth/login", {}, { email: String(form.get("email")), password: String(form.get("password")) });
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
