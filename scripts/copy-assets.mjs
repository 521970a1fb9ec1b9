// Serves the API reference offline: Scalar's prebuilt standalone script goes into the Worker's
// static assets (public/ is not committed; this runs on every install and before dev).
// The script is taken from the package's tarball (`npm pack`) rather than installed: the package
// declares Node >= 22 for its build tooling, and only this one prebuilt browser file is used.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const SCALAR = "@scalar/api-reference@1.72.1";
const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const target = path.join(root, "public", "v1", "docs");
const script = path.join(target, "scalar.js");
const stamp = path.join(target, "scalar.version");

if (!existsSync(script) || !existsSync(stamp) || readFileSync(stamp, "utf8") !== SCALAR) {
  mkdirSync(target, { recursive: true });
  const work = mkdtempSync(path.join(tmpdir(), "scalar-"));
  try {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const tarball = execFileSync(npm, ["pack", SCALAR, "--silent", "--pack-destination", work], { cwd: work, encoding: "utf8" })
      .trim()
      .split("\n")
      .pop();
    execFileSync("tar", ["-xzf", path.join(work, tarball), "-C", work, "package/dist/browser/standalone.js"]);
    copyFileSync(path.join(work, "package", "dist", "browser", "standalone.js"), script);
    writeFileSync(stamp, SCALAR);
  } catch (err) {
    console.warn(`copy-assets: could not fetch ${SCALAR} (${err.message.split("\n")[0]}); /v1/docs will render without its script`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// The lists of the catalogue of languages, from the language files present (before the pages, which import them).
try {
  const { buildLanguages } = await import("./build-languages.mjs");
  buildLanguages();
} catch (err) {
  console.warn(`copy-assets: the languages' lists were not written (${err.message.split("\n")[0]})`);
}

// The widget script, minified (src/widget/embed.min.js, which the Worker serves).
try {
  const { buildEmbed } = await import("./build-embed.mjs");
  await buildEmbed();
} catch (err) {
  console.warn(`copy-assets: embed.js was not minified (${err.message.split("\n")[0]})`);
}

// The pages (/console, /kiosk, /t/…, /console/floor): bundled into public/pages on every install
// and before `npm run dev` (docs/pages.md). esbuild is a devDependency: an install without it
// (production-only) skips the pages with a warning.
try {
  const { buildPages } = await import("./build-pages.mjs");
  await buildPages({ quiet: true });
} catch (err) {
  console.warn(`copy-assets: the pages were not built (${err.message.split("\n")[0]})`);
}
