import type { Deps } from "../http/deps";

// The organization's monthly ticket quota is kept by its ledger (src/ledger/ledger.ts,
// docs/room-rules.md): a queue's room takes a unit per join there. D1's usage_counters row is
// the ledger's projection, written a moment after each change and on demand here.

export function ledgerOf({ env }: Deps, organizationId: string) {
  return env.ORG_LEDGER.get(env.ORG_LEDGER.idFromName(organizationId));
}

/** Brings D1's tickets count up to the ledger's before it is read (the usage route). */
export async function flushTicketCount(deps: Deps, organizationId: string): Promise<void> {
  await ledgerOf(deps, organizationId).flush();
}
