// What a function of a saved profile spends its time on, and who calls it (issue 43):
//   node test/bench/profile-callers.mjs <file.cpuprofile> <function name> [depth]
// The profiles are those `BENCH_PROFILE_DIR=<dir> npm run bench` writes, one per profiled route.
// Prints, per request of the profiled run, the function's callees as a tree (total time, self and
// callees, merged by name over every call of the function) down to `depth` levels, then its callers.
import { readFileSync } from "node:fs";

const [file, wanted, depthArg] = process.argv.slice(2);
if (!file || !wanted) {
  console.error("usage: node test/bench/profile-callers.mjs <file.cpuprofile> <function name> [depth]");
  process.exit(2);
}
const depth = Number(depthArg ?? 4);
const profile = JSON.parse(readFileSync(file, "utf8"));
const requests = Math.max(1, profile.requests ?? 1);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0)));
const total = new Map();
const totalOf = (id) => {
  if (total.has(id)) return total.get(id);
  const n = byId.get(id);
  const us = (self.get(id) ?? 0) + (n.children ?? []).reduce((sum, c) => sum + totalOf(c), 0);
  total.set(id, us);
  return us;
};
const name = (n) => {
  const f = n.callFrame;
  return `${f.functionName || "(anonymous)"}${f.url ? `:${f.lineNumber + 1}` : ""}`;
};
const ms = (us) => (us / 1000 / requests).toFixed(3);

// The outermost calls of the function (a recursive call is counted inside its caller).
const matches = profile.nodes.filter((n) => name(n) === wanted || n.callFrame.functionName === wanted);
const outer = matches.filter((n) => {
  for (let p = parent.get(n.id); p !== undefined; p = parent.get(p)) if (matches.includes(byId.get(p))) return false;
  return true;
});
if (outer.length === 0) {
  console.error(`no frame named ${wanted}`);
  process.exit(1);
}

// Callees merged by name path.
const tree = { us: 0, self: 0, children: new Map() };
const merge = (into, id, level) => {
  const n = byId.get(id);
  into.us += totalOf(id);
  into.self += self.get(id) ?? 0;
  if (level >= depth) return;
  for (const c of n.children ?? []) {
    const key = name(byId.get(c));
    if (!into.children.has(key)) into.children.set(key, { us: 0, self: 0, children: new Map() });
    merge(into.children.get(key), c, level + 1);
  }
};
for (const n of outer) merge(tree, n.id, 0);
console.log(`${wanted}: ${ms(tree.us)} ms/req total, ${ms(tree.self)} self (${requests} requests)`);
const print = (node, indent) => {
  for (const [key, child] of [...node.children.entries()].sort((a, b) => b[1].us - a[1].us)) {
    if (child.us / 1000 / requests < 0.005) continue;
    console.log(`${"  ".repeat(indent)}${ms(child.us)}  ${key} (self ${ms(child.self)})`);
    print(child, indent + 1);
  }
};
print(tree, 1);

const callers = new Map();
for (const n of outer) {
  const chain = [];
  for (let p = parent.get(n.id); p !== undefined && chain.length < 4; p = parent.get(p)) chain.push(name(byId.get(p)));
  const key = chain.join(" < ");
  callers.set(key, (callers.get(key) ?? 0) + totalOf(n.id));
}
console.log("callers:");
for (const [key, us] of [...callers.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${ms(us)}  ${key}`);
