import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

// The suite's cost, printed at the end of every run: each file's time (slowest first), the ten
// slowest tests, and a budget per file. A file over its budget fails the run (exit code 1) and
// prints its per-test times, so the row that grew is named in the CI log.
//
// The default budget is 60 s. test/budgets.json may raise it for a file, with a reason:
//   { "test/integration/foo.test.ts": { "seconds": 90, "reason": "why this file needs longer" } }
// QUEUE_TEST_BUDGET_SECONDS overrides the default (e.g. to show the check failing).
//
// A budget is a quiet machine's: the suite alone puts a load of about SUITE_LOAD on the 2-core
// machine (two files at a time and the Node half). When the machine ran more beside it (the mean
// load average over the run above that), every budget grows by the same factor, printed with the
// times: a file that grew still shows against its neighbours, while a busy machine alone fails
// nothing (seen: 4 files over budget at a load of 12, none on the same commit at 3).
const SUITE_LOAD = 3;

interface Budget {
  seconds: number;
  reason: string;
}

const DEFAULT_BUDGET_SECONDS = 60;

function loadBudgets(root: string): Record<string, Budget> {
  const file = path.join(root, "test/budgets.json");
  let raw: Record<string, Budget>;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw e;
  }
  for (const [name, b] of Object.entries(raw)) {
    if (typeof b?.seconds !== "number" || typeof b?.reason !== "string" || b.reason.trim() === "")
      throw new Error(`test/budgets.json: ${name} needs {seconds: number, reason: non-empty string}`);
  }
  return raw;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export default class TimingReporter implements Reporter {
  private root = process.cwd();
  private loads: number[] = [];
  private sampler: ReturnType<typeof setInterval> | null = null;

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
    this.sampler = setInterval(() => this.loads.push(os.loadavg()[0]!), 5_000);
    this.sampler.unref();
  }

  /** How much the budgets stretch for this run: 1 on a quiet machine (above). */
  private loadFactor(): { factor: number; meanLoad: number | null } {
    if (this.sampler) clearInterval(this.sampler);
    if (this.loads.length === 0) return { factor: 1, meanLoad: null };
    const meanLoad = this.loads.reduce((a, b) => a + b, 0) / this.loads.length;
    return { factor: Math.max(1, meanLoad / SUITE_LOAD), meanLoad };
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const budgets = loadBudgets(this.root);
    const { factor, meanLoad } = this.loadFactor();
    const fallback = Number(process.env.QUEUE_TEST_BUDGET_SECONDS) || DEFAULT_BUDGET_SECONDS;
    const files = testModules.map((m) => {
      // Skipped tests (a -t filter, .skip) cost nothing and are left out.
      const tests = [...m.children.allTests()]
        .filter((t) => t.result().state !== "skipped")
        .map((t) => ({ name: t.fullName, ms: t.diagnostic()?.duration ?? 0 }));
      const d = m.diagnostic();
      const name = path.relative(this.root, m.moduleId);
      // The file's own cost: its tests and hooks, plus importing its modules and its setup file.
      // In a project whose files share runtimes (`isolate: false`: unit, integration) the setup
      // of whichever file comes first is the runtime's start, not that file's cost, so it is
      // printed but not counted against the budget.
      const shared = m.project.config.isolate === false;
      const ms = d.duration + d.collectDuration + (shared ? 0 : d.setupDuration);
      const parts = `tests and hooks ${seconds(d.duration)}, import ${seconds(d.collectDuration)}, setup ${seconds(d.setupDuration)}${shared ? " (shared runtime, not counted)" : ""}`;
      return { name, ms, parts, tests, budget: budgets[name]?.seconds ?? fallback };
    });
    if (files.length === 0) return;
    files.sort((a, b) => b.ms - a.ms);
    const out: string[] = ["", "Time per file (tests, hooks, import and setup), slowest first:"];
    for (const f of files)
      out.push(`  ${seconds(f.ms).padStart(8)}  ${f.name}  (${f.tests.length} tests: ${f.parts}; budget ${f.budget} s)`);
    const slowest = files
      .flatMap((f) => f.tests.map((t) => ({ ...t, file: f.name })))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10);
    out.push("", "Ten slowest tests:");
    for (const t of slowest) out.push(`  ${seconds(t.ms).padStart(8)}  ${t.file} > ${t.name}`);
    // Whether a test costs the same wherever it stands in its file (issue 37): for files of 20
    // tests or more, the mean of the last ten over the mean of the first ten, largest first.
    const mean = (ts: { ms: number }[]) => ts.reduce((sum, t) => sum + t.ms, 0) / ts.length;
    const growth = files
      .filter((f) => f.tests.length >= 20)
      .map((f) => ({ name: f.name, first: mean(f.tests.slice(0, 10)), last: mean(f.tests.slice(-10)) }))
      .map((g) => ({ ...g, ratio: g.first > 0 ? g.last / g.first : 1 }))
      .sort((a, b) => b.ratio - a.ratio);
    if (growth.length) {
      out.push("", "Growth along a file (mean of its last ten tests / first ten), largest first:");
      for (const g of growth.slice(0, 8))
        out.push(`  ${g.ratio.toFixed(2).padStart(8)}  ${g.name}  (first ten ${g.first.toFixed(0)} ms, last ten ${g.last.toFixed(0)} ms)`);
      const roles = growth.find((g) => g.name.endsWith("/roles.test.ts"));
      if (roles && !growth.slice(0, 8).includes(roles))
        out.push(
          `  ${roles.ratio.toFixed(2).padStart(8)}  ${roles.name}  (first ten ${roles.first.toFixed(0)} ms, last ten ${roles.last.toFixed(0)} ms)`,
        );
    }
    if (meanLoad !== null)
      out.push(
        "",
        `Load average over the run: ${meanLoad.toFixed(1)} (the suite alone: about ${SUITE_LOAD}); budgets × ${factor.toFixed(2)} for this run.`,
      );
    const over = files.filter((f) => f.ms > f.budget * factor * 1000);
    for (const f of over) {
      out.push(
        "",
        `OVER BUDGET: ${f.name} took ${seconds(f.ms)}, its budget is ${f.budget} s (× ${factor.toFixed(2)} for the load). Its tests, in order:`,
      );
      for (const t of f.tests) out.push(`  ${seconds(t.ms).padStart(8)}  ${t.name}`);
    }
    const unknown = Object.keys(budgets).filter((n) => !files.some((f) => f.name === n));
    // A budget for a file that no longer exists is only reported when the whole suite ran.
    if (files.length > 50 && unknown.length) out.push("", `test/budgets.json names files that did not run: ${unknown.join(", ")}`);
    console.log(out.join("\n"));
    if (over.length) {
      console.error(`\n${over.length} file(s) over their time budget: ${over.map((f) => f.name).join(", ")}`);
      process.exitCode = 1;
    }
  }
}
