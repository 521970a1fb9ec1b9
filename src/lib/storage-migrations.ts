// A Durable Object's own SQLite schema as numbered steps (the model: cloudflare/actors' SQL
// schema migrations). Each step runs once, in its own transaction together with the counter
// update, so a step that fails halfway rolls back whole and the next start runs it again from a
// clean slate. The applied count lives in a one-row table named by the object's kind.

export function migrateStorage(storage: DurableObjectStorage, counterTable: string, steps: readonly string[]): void {
  if (!/^[a-z_]+$/.test(counterTable)) throw new Error(`not a table name: ${counterTable}`);
  const sql = storage.sql;
  storage.transactionSync(() => {
    sql.exec(`CREATE TABLE IF NOT EXISTS ${counterTable} (applied INTEGER NOT NULL)`);
    if (sql.exec(`SELECT 1 FROM ${counterTable}`).toArray().length === 0) sql.exec(`INSERT INTO ${counterTable} (applied) VALUES (0)`);
  });
  const applied = sql.exec<{ applied: number }>(`SELECT applied FROM ${counterTable}`).one().applied;
  for (let i = applied; i < steps.length; i++) {
    storage.transactionSync(() => {
      sql.exec(steps[i]!);
      sql.exec(`UPDATE ${counterTable} SET applied = ?`, i + 1);
    });
  }
}
