import type { RoomError } from "./types";

// A room refuses by throwing inside its storage transaction, which rolls back everything the
// command wrote; the change path turns the refusal into a value (errors lose their shape
// across RPC).

export class Refusal extends Error {
  constructor(readonly error: RoomError) {
    super(error.message);
  }
}

export function refuse(code: RoomError["code"], message: string, details: Record<string, unknown> = {}): never {
  throw new Refusal({ code, message, details });
}

export function invalidState(status: string, allowed: readonly string[], message: string, extra: Record<string, unknown> = {}): never {
  refuse("INVALID_STATE", message, { status, allowed: [...allowed], ...extra });
}
