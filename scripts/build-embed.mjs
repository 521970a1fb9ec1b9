// Minifies the widget script (src/widget/embed.js) into src/widget/embed.min.js, which the Worker
// serves (src/widget/embed.routes.ts, with the catalogue's words put into its QW_CATALOGUE slot).
// embed.min.js is not committed: this runs on install and before `npm run dev` and the browser
// suite (scripts/copy-assets.mjs), before every vitest run (vitest.config.ts) and before
// `npm run deploy`, so nobody runs it by hand. esbuild (the pages' bundler) keeps the slot's name,
// a global it cannot rename, and the `/*!` licence line.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const source = path.join(root, "src", "widget", "embed.js");
const target = path.join(root, "src", "widget", "embed.min.js");

export async function buildEmbed() {
  const { transformSync } = await import("esbuild");
  const { code } = transformSync(readFileSync(source, "utf8"), {
    minify: true,
    target: "es2020",
    charset: "utf8",
    legalComments: "inline",
  });
  if (code.split("QW_CATALOGUE").length !== 2) throw new Error("build-embed: the minified script must name QW_CATALOGUE exactly once");
  // Written whole or not at all (a temporary file renamed over it), and only when it changed: the
  // Node half of `npm test` reads the file while the Workers half's config builds it again.
  if (!existsSync(target) || readFileSync(target, "utf8") !== code) {
    const temporary = `${target}.${process.pid}.tmp`;
    writeFileSync(temporary, code);
    renameSync(temporary, target);
  }
  return code;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const code = await buildEmbed();
  console.log(`build-embed: src/widget/embed.min.js, ${code.length} bytes`);
}
