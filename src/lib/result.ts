// A value or the reason there is none. Refusals cross RPC (a Durable Object to the Worker, a
// room to another room) as values, because errors lose their shape across RPC.

export type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };
