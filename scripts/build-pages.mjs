// Builds the pages the Worker serves to people (docs/pages.md): each src/pages/<page>/main.tsx
// is bundled by esbuild (hono/jsx/dom, minified, ES2020) into a content-hashed script and style
// under public/pages/, next to a small HTML shell (public/pages/<page>.html) that names them.
// The Worker answers /console, /console/floor, /kiosk and /t/{ticketId} with those shells
// (src/http/pages.ts). public/ is not committed: this runs on install (scripts/copy-assets.mjs),
// before `npm run dev` and before the browser suite, so nobody runs it by hand.
// `node scripts/build-pages.mjs --sizes` also prints each page's gzip size (docs/benchmarks.md).
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const out = path.join(root, "public", "pages");

/** Page name → what the HTML shell needs. `status` is the visitor's /t/{ticketId} page. */
export const PAGES = {
  console: { title: "Counter console", lang: "en" },
  floor: { title: "Floor", lang: "en" },
  kiosk: { title: "Take a ticket", lang: "en" },
  status: { title: "Your ticket", lang: "en" },
  appointment: { title: "Your appointment", lang: "en" },
};

const shell = (page, { title, lang }, files) => `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="theme-color" content="#0f3d5e">
<link rel="icon" href="data:,">
<title>${title}</title>
${files.css ? `<link rel="stylesheet" href="/pages/${files.css}">` : ""}
<script type="module" src="/pages/${files.js}"></script>
</head>
<body class="page-${page}">
<main id="app" aria-live="polite"></main>
<noscript>This page needs JavaScript. / Cette page a besoin de JavaScript.</noscript>
</body>
</html>
`;

export async function buildPages({ quiet = false } = {}) {
  const esbuild = await import("esbuild");
  // The pages import the catalogue's lists: written from the language files present first.
  (await import("./build-languages.mjs")).buildLanguages();
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = await esbuild.build({
    entryPoints: Object.keys(PAGES).map((page) => ({ in: path.join(root, "src", "pages", page, "main.tsx"), out: page })),
    outdir: out,
    entryNames: "[name]-[hash]",
    chunkNames: "shared-[hash]",
    bundle: true,
    splitting: false,
    format: "esm",
    minify: true,
    target: "es2020",
    jsx: "automatic",
    jsxImportSource: "hono/jsx/dom",
    legalComments: "none",
    metafile: true,
    logLevel: quiet ? "error" : "warning",
  });
  const sizes = {};
  for (const [file, meta] of Object.entries(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    const page = Object.keys(PAGES).find(
      (p) => meta.entryPoint.endsWith(`/${p}/main.tsx`) || meta.entryPoint === `src/pages/${p}/main.tsx`,
    );
    const js = path.basename(file);
    const css = meta.cssBundle ? path.basename(meta.cssBundle) : null;
    writeFileSync(path.join(out, `${page}.html`), shell(page, PAGES[page], { js, css }));
    const gz = (name) => (name ? gzipSync(readFileSync(path.join(out, name)), { level: 9 }).length : 0);
    sizes[page] = { js, jsGzip: gz(js), cssGzip: gz(css) };
  }
  // The assets serve the shells under /pages/ too (/pages/console): with the Worker's headers, so
  // that no path to a page leaves it framable or without its CSP (src/http/page-headers.json).
  const headers = JSON.parse(readFileSync(path.join(root, "src", "http", "page-headers.json"), "utf8"));
  writeFileSync(
    path.join(root, "public", "_headers"),
    "# Written by scripts/build-pages.mjs from src/http/page-headers.json: do not edit.\n/pages/*\n" +
      Object.entries(headers)
        .map(([name, value]) => `  ${name}: ${value}\n`)
        .join(""),
  );
  // The status page's service worker keeps a fixed name: a browser finds its registration by URL.
  copyFileSync(path.join(root, "src", "pages", "status", "push-sw.js"), path.join(out, "push-sw.js"));
  return sizes;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = await buildPages();
  if (process.argv.includes("--sizes"))
    for (const [page, s] of Object.entries(sizes))
      console.log(`${page.padEnd(8)} JS ${(s.jsGzip / 1024).toFixed(1)} KB gzip, CSS ${(s.cssGzip / 1024).toFixed(1)} KB gzip  (${s.js})`);
  else console.log(`pages built into public/pages (${readdirSync(out).length} files)`);
}
