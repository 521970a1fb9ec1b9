// Banners above the desk's work area, one small component each (docs/pages.md): today the failed
// read of the desk. A new banner (e.g. a staff alert) is one more component rendered here.
import type { Lang } from "../shared/i18n";
import type { DeskView } from "./desk-view";
import type { ConsoleText } from "./i18n";
import { refusalText } from "./refusal";

export interface BannerProps {
  view: DeskView | null;
  readError: unknown;
  t: ConsoleText;
  lang: Lang;
  retry: () => void;
}

function ReadFailed(p: BannerProps) {
  if (!p.readError) return null;
  return (
    <div class="notice error banner" role="alert" data-banner="read-failed">
      <span>{p.t.readFailed(refusalText(p.readError, p.lang))}</span>
      <button type="button" class="small" onClick={p.retry}>
        {p.t.retry}
      </button>
    </div>
  );
}

/** Every banner, in order. */
export function DeskBanners(p: BannerProps) {
  return (
    <div class="banners">
      <ReadFailed {...p} />
    </div>
  );
}
