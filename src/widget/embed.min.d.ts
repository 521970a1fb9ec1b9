// embed.js minified (scripts/build-embed.mjs, not committed); the Worker imports it as text (wrangler.toml [[rules]]).
declare const source: string;
export default source;
