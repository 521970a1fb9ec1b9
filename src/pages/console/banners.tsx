// Banners above the desk's work area, one small component each (docs/pages.md): the failed read
// of the desk, and the staff alert for this desk (a visitor past the queue's target while it is idle).
import { minutes, type PageLang } from "../shared/i18n";
import type { DeskView } from "./desk-view";
import type { ConsoleText } from "./i18n";
import { refusalText } from "./refusal";
import type { StaffAlert } from "./staff-alerts";

export interface BannerProps {
  view: DeskView | null;
  readError: unknown;
  t: ConsoleText;
  lang: PageLang;
  retry: () => void;
  alerts: StaffAlert[];
  /** The last read of the floor's alerts failed (the alerts shown are the previous ones). */
  alertsError: unknown;
  retryAlerts: () => void;
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

function AlertsFailed(p: BannerProps) {
  if (!p.alertsError) return null;
  return (
    <div class="notice error banner" role="alert" data-banner="alerts-failed">
      <span>{p.t.alertsFailed(refusalText(p.alertsError, p.lang), p.alerts.length > 0)}</span>
      <button type="button" class="small" onClick={p.retryAlerts}>
        {p.t.retry}
      </button>
    </div>
  );
}

function StaffAlerts(p: BannerProps) {
  if (p.alerts.length === 0) return null;
  return (
    <div class="notice alert banner" role="alert" data-banner="staff-alert">
      {p.alerts.map((a) => (
        <p data-alert={a.queueId}>{p.t.staffAlert(a.displayCode, minutes(Math.floor(a.waitedSeconds / 60), p.lang))}</p>
      ))}
    </div>
  );
}

/** Every banner, in order. */
export function DeskBanners(p: BannerProps) {
  return (
    <div class="banners">
      <ReadFailed {...p} />
      <AlertsFailed {...p} />
      <StaffAlerts {...p} />
    </div>
  );
}
